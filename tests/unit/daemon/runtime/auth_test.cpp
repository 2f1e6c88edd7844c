// The cluster token, the Authorization header, the failed-attempt limiter and CIDR lists.
#include "daemon/runtime/auth.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace auth_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::daemon;
using meshperf::core::spec_error;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A private temporary directory, removed with everything in it.
class temp_dir {
public:
    temp_dir() {
        std::string tmpl = (fs::temp_directory_path() / "meshperf-auth-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path_ = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    fs::path write(const std::string& name, const std::string& content, mode_t mode) const {
        const fs::path p = path_ / name;
        {
            std::ofstream out(p, std::ios::binary);
            out << content;
        }
        REQUIRE(::chmod(p.c_str(), mode) == 0);
        return p;
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string load_error(const fs::path& p) {
    try {
        load_token_file(p);
    } catch (const spec_error& e) {
        return e.what();
    }
    return "(no spec_error)";
}

ip_address ip(const char* text) {
    const auto a = parse_ip_address(text);
    REQUIRE_MESSAGE(a, text);
    return *a;
}

std::string cidr_error(std::string_view text) {
    try {
        parse_cidr(text);
    } catch (const spec_error& e) {
        return e.what();
    }
    return "(no spec_error)";
}

// A clock the test moves by hand.
struct manual_clock {
    auth_throttle::clock::time_point now{std::chrono::hours(1000)};
    auth_throttle::now_function fn() {
        return [this] { return now; };
    }
};

}  // namespace

// ---------------------------------------------------------------------------------------

TEST_CASE("token file: a private file is read and its trailing newline trimmed") {
    temp_dir d;
    CHECK(load_token_file(d.write("t1", "3f9a0c7e1b2d\n", 0600)) == "3f9a0c7e1b2d");
    CHECK(load_token_file(d.write("t2", "3f9a0c7e1b2d\r\n", 0400)) == "3f9a0c7e1b2d");
    CHECK(load_token_file(d.write("t3", "abc-DEF_0.9~x+y/z==", 0600)) == "abc-DEF_0.9~x+y/z==");
    CHECK(load_token_file(d.write("t4", "tok  \t\n\n", 0700)) == "tok");

    // A symlink (e.g. into a secrets mount) is followed; the target's mode is what counts.
    const auto target = d.write("real", "secret-token\n", 0600);
    fs::create_symlink(target, d.path() / "link");
    CHECK(load_token_file(d.path() / "link") == "secret-token");
}

TEST_CASE("token file: readable or writable by others is refused like ssh refuses a key") {
    temp_dir d;
    const auto p = d.write("token", "secret-token\n", 0644);
    CHECK(load_error(p) == "token file " + p.string() + " is readable by others (mode 0644): chmod 600 it");
    CHECK(load_error(d.write("g", "secret-token\n", 0640)).find("is readable by others (mode 0640)") !=
          std::string::npos);
    CHECK(load_error(d.write("o", "secret-token\n", 0604)).find("readable by others (mode 0604)") !=
          std::string::npos);
    CHECK(load_error(d.write("w", "secret-token\n", 0620)).find("is writable by others (mode 0620): chmod 600 it") !=
          std::string::npos);
    CHECK(load_error(d.write("x", "secret-token\n", 0601)).find("(mode 0601)") != std::string::npos);

    CHECK(token_file_mode_problem("/etc/meshperf/token", 0100644) ==
          "token file /etc/meshperf/token is readable by others (mode 0644): chmod 600 it");
    CHECK_FALSE(token_file_mode_problem("/t", 0100600));
    CHECK_FALSE(token_file_mode_problem("/t", 0100400));
    // The message never carries the secret.
    CHECK(load_error(p).find("secret-token") == std::string::npos);
}

TEST_CASE("token file: empty, multi-line, oversized or odd content is refused with a hint") {
    temp_dir d;
    CHECK(load_error(d.write("e", "", 0600)).find("is empty: write the cluster token into it") != std::string::npos);
    CHECK(load_error(d.write("n", "\n\n", 0600)).find("is empty") != std::string::npos);
    CHECK(load_error(d.write("two", "line-one\nline-two\n", 0600)).find("holds more than one line") !=
          std::string::npos);
    const std::string spaced = load_error(d.write("sp", "secret token\n", 0600));
    CHECK(spaced.find("character 0x20 at offset 6 cannot appear in a bearer token") != std::string::npos);
    CHECK(spaced.find("secret") == std::string::npos);  // the token is never shown
    CHECK(spaced.find("secret token") == std::string::npos);
    CHECK(load_error(d.write("lead", " token\n", 0600)).find("offset 0") != std::string::npos);
    CHECK(load_error(d.write("eq", "ab=cd\n", 0600)).find("'=' may only end it") != std::string::npos);
    CHECK(load_error(d.write("big", std::string(max_token_length + 1, 'a'), 0600))
              .find("a token is one line of at most 1024") != std::string::npos);
    CHECK(load_token_file(d.write("max", std::string(max_token_length, 'a') + "\n", 0600)).size() ==
          max_token_length);
    CHECK(load_error(d.write("huge", std::string(1 << 20, 'a'), 0600)).find("at most 1024") != std::string::npos);
}

TEST_CASE("token file: missing, a directory or a FIFO fails with a clear error, never hangs") {
    temp_dir d;
    const auto missing = d.path() / "absent";
    try {
        load_token_file(missing);
        FAIL("no exception");
    } catch (const std::system_error& e) {
        CHECK(e.code() == std::errc::no_such_file_or_directory);
        CHECK(std::string(e.what()).find("open token file " + missing.string()) != std::string::npos);
    }

    CHECK(load_error(d.path()).find("is not a regular file") != std::string::npos);

    const auto fifo = d.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(load_error(fifo).find("is not a regular file") != std::string::npos);

    if (::geteuid() != 0) {  // root reads anything; the hint is for the service user
        const auto locked = d.write("locked", "tok\n", 0000);
        try {
            load_token_file(locked);
            FAIL("no exception");
        } catch (const std::system_error& e) {
            CHECK(e.code() == std::errc::permission_denied);
            CHECK(std::string(e.what()).find("(make it owned by that user, mode 600)") != std::string::npos);
        }
    }
}

TEST_CASE("tokens_equal: equal only when every byte and the length agree") {
    CHECK(tokens_equal("0123456789abcdef", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("0123456789abcdef", "x123456789abcdef"));
    CHECK_FALSE(tokens_equal("0123456789abcdef", "0123456789abcdex"));
    CHECK_FALSE(tokens_equal("0123456789abcdef", "0123456789abcde"));
    CHECK_FALSE(tokens_equal("0123456789abcdef", "0123456789abcdef0"));
    CHECK_FALSE(tokens_equal("0123456789abcdef", "0123456789abcdef0123456789abcdef"));  // wraps around
    CHECK_FALSE(tokens_equal("abc", ""));
    CHECK_FALSE(tokens_equal("", ""));  // no token configured authenticates nobody
    CHECK_FALSE(tokens_equal("", "abc"));
}

TEST_CASE("parse_bearer: the token of an Authorization header value") {
    CHECK(parse_bearer("Bearer abc123") == "abc123");
    CHECK(parse_bearer("bearer abc123") == "abc123");
    CHECK(parse_bearer("BEARER abc123") == "abc123");
    CHECK(parse_bearer("  Bearer    abc123 \t") == "abc123");
    CHECK(parse_bearer("Bearer a-b.c_d~e+f/g==") == "a-b.c_d~e+f/g==");

    CHECK_FALSE(parse_bearer(""));
    CHECK_FALSE(parse_bearer("Bearer"));
    CHECK_FALSE(parse_bearer("Bearer "));
    CHECK_FALSE(parse_bearer("Bearerabc123"));
    CHECK_FALSE(parse_bearer("Bearer\tabc123"));
    CHECK_FALSE(parse_bearer("Basic YWxhZGRpbjpvcGVuc2VzYW1l"));
    CHECK_FALSE(parse_bearer("Bearer abc 123"));
    CHECK_FALSE(parse_bearer("Bearer ab=c"));
    CHECK_FALSE(parse_bearer("Bearer =abc"));
    CHECK_FALSE(parse_bearer("Bearer abc\r\nX-Evil: 1"));
    CHECK_FALSE(parse_bearer("Bearer " + std::string(max_token_length + 1, 'a')));

    CHECK(bearer_matches("abc123", "Bearer abc123"));
    CHECK_FALSE(bearer_matches("abc123", "Bearer abc124"));
    CHECK_FALSE(bearer_matches("abc123", "abc123"));
    CHECK_FALSE(bearer_matches("", "Bearer "));
    CHECK(www_authenticate_challenge == "Bearer realm=\"meshperf\"");
}

// ---------------------------------------------------------------------------------------

TEST_CASE("ip addresses: IPv4, IPv6, brackets and zones; nothing is resolved") {
    CHECK(ip("10.1.2.3").is_v4());
    CHECK(ip("10.1.2.3").to_string() == "10.1.2.3");
    CHECK(ip("fd00::1").to_string() == "fd00::1");
    CHECK_FALSE(ip("fd00::1").is_v4());
    CHECK(ip("[fd00::1]") == ip("fd00::1"));
    CHECK(ip("fe80::1%eth0") == ip("fe80::1"));
    CHECK(ip("::ffff:10.1.2.3").unmapped() == ip("10.1.2.3"));
    CHECK(ip("fd00::1").unmapped() == ip("fd00::1"));
    CHECK(ip_address::v4({127, 0, 0, 1}) == ip("127.0.0.1"));

    CHECK_FALSE(parse_ip_address(""));
    CHECK_FALSE(parse_ip_address("localhost"));
    CHECK_FALSE(parse_ip_address("10.1.2"));
    CHECK_FALSE(parse_ip_address("10.1.2.256"));
    CHECK_FALSE(parse_ip_address("10.1.2.3:7470"));
    CHECK_FALSE(parse_ip_address("10.1.2.3%eth0"));
    CHECK_FALSE(parse_ip_address("fd00:::1"));
    CHECK_FALSE(parse_ip_address(std::string(100, '1')));
}

TEST_CASE("cidr: networks and single addresses, IPv4 and IPv6") {
    const cidr ten = parse_cidr("10.0.0.0/8");
    CHECK(ten.prefix_length == 8);
    CHECK(ten.to_string() == "10.0.0.0/8");
    CHECK(ten.contains(ip("10.0.0.0")));
    CHECK(ten.contains(ip("10.255.255.255")));
    CHECK_FALSE(ten.contains(ip("11.0.0.0")));
    CHECK_FALSE(ten.contains(ip("9.255.255.255")));
    CHECK(ten.contains(ip("::ffff:10.1.2.3")));  // IPv4 client on a dual-stack socket
    CHECK_FALSE(ten.contains(ip("fd00::1")));

    const cidr odd = parse_cidr("10.128.0.0/9");
    CHECK(odd.contains(ip("10.200.0.1")));
    CHECK_FALSE(odd.contains(ip("10.1.0.1")));

    const cidr ula = parse_cidr("fd00::/8");
    CHECK(ula.to_string() == "fd00::/8");
    CHECK(ula.contains(ip("fd12:3456::1")));
    CHECK(ula.contains(ip("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
    CHECK_FALSE(ula.contains(ip("fe80::1")));
    CHECK_FALSE(ula.contains(ip("10.0.0.1")));

    const cidr doc = parse_cidr("2001:db8:8000::/33");
    CHECK(doc.contains(ip("2001:db8:ffff::1")));
    CHECK_FALSE(doc.contains(ip("2001:db8:7fff::1")));

    const cidr one = parse_cidr("10.0.0.7");
    CHECK(one.prefix_length == 32);
    CHECK(one.contains(ip("10.0.0.7")));
    CHECK_FALSE(one.contains(ip("10.0.0.8")));
    CHECK(parse_cidr("fd00::7").prefix_length == 128);
    CHECK(parse_cidr("fd00::7").contains(ip("fd00::7")));
    CHECK_FALSE(parse_cidr("fd00::7").contains(ip("fd00::8")));

    CHECK(parse_cidr("0.0.0.0/0").contains(ip("203.0.113.9")));
    CHECK(parse_cidr("0.0.0.0/0").contains(ip("::ffff:203.0.113.9")));
    CHECK_FALSE(parse_cidr("0.0.0.0/0").contains(ip("fd00::1")));
    CHECK(parse_cidr("::/0").contains(ip("fd00::1")));
    CHECK_FALSE(parse_cidr("::/0").contains(ip("10.0.0.1")));

    CHECK(parse_cidr("::ffff:10.0.0.0/104") == parse_cidr("10.0.0.0/8"));
    CHECK(parse_cidr("127.0.0.1/32").contains(ip("127.0.0.1")));
}

TEST_CASE("cidr: mistakes are refused with a message saying what is wrong") {
    CHECK(cidr_error("10.0.0.0/33") == "\"10.0.0.0/33\" is not a CIDR block: the prefix length of an IPv4 "
                                       "network is 0 to 32");
    CHECK(cidr_error("fd00::/129").find("IPv6 network is 0 to 128") != std::string::npos);
    CHECK(cidr_error("10.1.2.3/8") ==
          "\"10.1.2.3/8\" has host bits set: did you mean 10.0.0.0/8 (or 10.1.2.3/32 for the one address)?");
    CHECK(cidr_error("fd00::1/8").find("did you mean fd00::/8") != std::string::npos);
    CHECK(cidr_error("10.0.0.0/").find("prefix length") != std::string::npos);
    CHECK(cidr_error("10.0.0.0/-1").find("prefix length") != std::string::npos);
    CHECK(cidr_error("10.0.0.0/8x").find("prefix length") != std::string::npos);
    CHECK(cidr_error("10.0.0.0/ 8").find("prefix length") != std::string::npos);
    CHECK(cidr_error("node1/8").find("\"node1\" is not an IPv4 or IPv6 address (host names are not resolved)") !=
          std::string::npos);
    CHECK(cidr_error("10.0.0/8").find("is not an IPv4 or IPv6 address") != std::string::npos);
    CHECK(cidr_error("").find("it is empty") != std::string::npos);
    CHECK(cidr_error("fe80::%eth0/64").find("zone") != std::string::npos);
    CHECK(cidr_error("[fd00::]/8").find("is not an IPv4 or IPv6 address") != std::string::npos);
}

TEST_CASE("cidr_list: any network matches; an empty list matches nothing") {
    const std::vector<std::string> entries{"10.0.0.0/8", "fd00::/8", "192.0.2.7"};
    const cidr_list list(entries);
    CHECK(list.to_string() == "10.0.0.0/8, fd00::/8, 192.0.2.7/32");
    CHECK(list.contains(ip("10.9.8.7")));
    CHECK(list.contains(ip("fd00::42")));
    CHECK(list.contains(ip("192.0.2.7")));
    CHECK(list.contains(ip("::ffff:192.0.2.7")));
    CHECK_FALSE(list.contains(ip("192.0.2.8")));
    CHECK_FALSE(list.contains(ip("2001:db8::1")));

    const cidr_list none;
    CHECK(none.empty());
    CHECK_FALSE(none.contains(ip("10.0.0.1")));

    const std::vector<std::string> bad{"10.0.0.0/8", "10.0.0.1/24"};
    CHECK_THROWS_WITH_AS(cidr_list{bad}, doctest::Contains("\"10.0.0.1/24\" has host bits set"), spec_error);
}

// ---------------------------------------------------------------------------------------

TEST_CASE("auth_throttle: free failures, then a doubling wait with a cap") {
    manual_clock clk;
    auth_throttle::options opt;  // defaults: 3 free, 1 s, doubling, 60 s cap
    auth_throttle t(opt, clk.fn());
    const ip_address a = ip("10.0.0.5");

    CHECK(t.retry_after(a) == 0ms);
    CHECK(t.record_failure(a) == 0ms);
    CHECK(t.record_failure(a) == 0ms);
    CHECK(t.record_failure(a) == 0ms);
    CHECK(t.retry_after(a) == 0ms);
    CHECK(t.failures(a) == 3);

    CHECK(t.record_failure(a) == 1000ms);
    CHECK(t.retry_after(a) == 1000ms);
    clk.now += 400ms;
    CHECK(t.retry_after(a) == 600ms);
    clk.now += 600ms;
    CHECK(t.retry_after(a) == 0ms);

    CHECK(t.record_failure(a) == 2000ms);
    clk.now += 2s;
    CHECK(t.record_failure(a) == 4000ms);
    for (int i = 0; i < 10; ++i) {
        clk.now += 60s;
        t.record_failure(a);
    }
    CHECK(t.retry_after(a) == 60'000ms);  // capped
    CHECK(t.failures(a) == 16);

    // Other clients are not affected.
    CHECK(t.retry_after(ip("10.0.0.6")) == 0ms);

    // Sub-millisecond remainders round up, never down to "go ahead".
    clk.now += 59'999'500us;
    CHECK(t.retry_after(a) == 1ms);

    // One success forgets everything.
    clk.now += 1s;
    t.record_success(a);
    CHECK(t.failures(a) == 0);
    CHECK(t.size() == 0);
    CHECK(t.record_failure(a) == 0ms);
}

TEST_CASE("auth_throttle: delay_after follows the options") {
    auth_throttle::options opt;
    opt.free_failures = 0;
    opt.first_delay = 250ms;
    opt.max_delay = 5s;
    const auth_throttle t(opt);
    CHECK(t.delay_after(0) == 0ms);
    CHECK(t.delay_after(1) == 250ms);
    CHECK(t.delay_after(2) == 500ms);
    CHECK(t.delay_after(5) == 4000ms);
    CHECK(t.delay_after(6) == 5000ms);
    CHECK(t.delay_after(4'000'000'000u) == 5000ms);  // no overflow

    CHECK_THROWS_AS(auth_throttle(auth_throttle::options{.max_clients = 0}), std::invalid_argument);
}

TEST_CASE("auth_throttle: a quiet client is forgotten after forget_after") {
    manual_clock clk;
    auth_throttle t({}, clk.fn());
    const ip_address a = ip("fd00::5");
    for (int i = 0; i < 5; ++i) t.record_failure(a);
    CHECK(t.failures(a) == 5);
    clk.now += 14min;
    CHECK(t.failures(a) == 5);
    clk.now += 1min;
    CHECK(t.failures(a) == 0);
    CHECK(t.size() == 0);
    CHECK(t.record_failure(a) == 0ms);
}

TEST_CASE("auth_throttle: IPv4 and its mapped IPv6 form are one client; IPv6 is not grouped by /64") {
    manual_clock clk;
    auth_throttle t({}, clk.fn());
    for (int i = 0; i < 4; ++i) t.record_failure(ip("10.0.0.9"));
    CHECK(t.retry_after(ip("::ffff:10.0.0.9")) == 1000ms);
    CHECK(t.failures(ip("::ffff:10.0.0.9")) == 4);

    for (int i = 0; i < 4; ++i) t.record_failure(ip("fd00:1:2:3::10"));
    CHECK(t.retry_after(ip("fd00:1:2:3::10")) == 1000ms);
    CHECK(t.retry_after(ip("fd00:1:2:3::11")) == 0ms);  // a neighbour in the same /64
    CHECK(t.size() == 2);
}

TEST_CASE("auth_throttle: memory is bounded; the least recently failed are forgotten first") {
    manual_clock clk;
    auth_throttle t({}, clk.fn());  // max_clients = 4096
    auto nth = [](unsigned i) {
        return ip_address::v4({10, static_cast<std::uint8_t>(i >> 16), static_cast<std::uint8_t>(i >> 8),
                               static_cast<std::uint8_t>(i)});
    };
    for (int k = 0; k < 4; ++k) t.record_failure(nth(0));  // the attacker fails first
    for (unsigned i = 1; i < 5000; ++i) {
        clk.now += 1ms;
        t.record_failure(nth(i));
        if (i == 4000) t.record_failure(nth(0));  // ...and again later: it stays remembered
    }
    CHECK(t.size() == 4096);
    CHECK(t.failures(nth(0)) == 5);
    CHECK(t.failures(nth(1)) == 0);      // evicted
    CHECK(t.failures(nth(904)) == 0);    // evicted
    CHECK(t.failures(nth(906)) == 1);    // kept
    CHECK(t.failures(nth(4999)) == 1);   // kept

    auth_throttle::options small;
    small.max_clients = 1;
    auth_throttle one(small, clk.fn());
    one.record_failure(ip("10.0.0.1"));
    one.record_failure(ip("10.0.0.2"));
    CHECK(one.size() == 1);
    CHECK(one.failures(ip("10.0.0.2")) == 1);
}

TEST_CASE("auth_throttle: concurrent use from several threads stays consistent") {
    auth_throttle::options opt;
    opt.max_clients = 64;
    auth_throttle t(opt);
    std::vector<std::thread> threads;
    for (unsigned th = 0; th < 4; ++th)
        threads.emplace_back([&t, th] {
            for (unsigned i = 0; i < 2000; ++i) {
                const auto a = ip_address::v4({10, static_cast<std::uint8_t>(th), static_cast<std::uint8_t>(i >> 8),
                                               static_cast<std::uint8_t>(i)});
                t.retry_after(a);
                t.record_failure(a);
                if (i % 3 == 0) t.record_success(a);
            }
        });
    for (auto& th : threads) th.join();
    CHECK(t.size() <= 64);
}

}  // namespace auth_test
