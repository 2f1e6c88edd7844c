#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "core/transport_rules.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace run_spec_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Contains;
using nlohmann::json;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

run_spec valid_spec() {
    run_spec s;
    s.peer = "node2:7470";
    s.sizes = {64, 4096};
    return s;
}

/// The spec_error message that validating `s` raises; empty when it is valid.
std::string problem(const run_spec& s, const run_limits& lim = {}) {
    try {
        validate(s, lim);
    } catch (const spec_error& e) {
        return e.what();
    }
    return {};
}

/// The spec_error message of run_spec_from_json(j); fails when it accepts j.
std::string json_problem(const json& j, const run_limits& lim = {}) {
    try {
        (void)run_spec_from_json(j, lim);
    } catch (const spec_error& e) {
        return e.what();
    }
    FAIL("expected a spec_error for " << j.dump());
    return {};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_same(const run_spec& a, const run_spec& b) {
    CHECK(a.peer == b.peer);
    CHECK(a.transport == b.transport);
    CHECK(a.tests == b.tests);
    CHECK(a.sizes == b.sizes);
    CHECK(a.streams == b.streams);
    CHECK(a.reverse == b.reverse);
    CHECK(a.iterations == b.iterations);
    CHECK(a.duration_s == b.duration_s);
    CHECK(a.precision == b.precision);
    CHECK(a.max_point_s == b.max_point_s);
    CHECK(a.warmup_s == b.warmup_s);
    CHECK(a.verify == b.verify);
    CHECK(a.busy_poll == b.busy_poll);
    CHECK(a.window_bytes == b.window_bytes);
    CHECK(a.cpus == b.cpus);
    CHECK(a.op == b.op);
    CHECK(a.tx_depth == b.tx_depth);
    CHECK(a.rdma_device == b.rdma_device);
    CHECK(a.rdma_port == b.rdma_port);
    CHECK(a.gid_index == b.gid_index);
    CHECK(a.local_memory == b.local_memory);
    CHECK(a.remote_memory == b.remote_memory);
    CHECK(a.adaptive() == b.adaptive());
}

}  // namespace

TEST_SUITE("run_spec") {

TEST_CASE("validate: a minimal spec with defaults is valid and adaptive") {
    const auto s = valid_spec();
    CHECK(problem(s).empty());
    CHECK(s.adaptive());
    CHECK(s.tests == std::vector<test_kind>{test_kind::latency, test_kind::bandwidth});
    CHECK(s.streams == 1);
    CHECK(s.precision == doctest::Approx(0.01));
}

TEST_CASE("validate: peer, tests and sizes must be present") {
    auto s = valid_spec();
    s.peer.clear();
    CHECK(has(problem(s), "no peer"));
    s = valid_spec();
    s.tests.clear();
    CHECK(has(problem(s), "no tests"));
    s = valid_spec();
    s.sizes.clear();
    CHECK(has(problem(s), "no sizes"));
}

TEST_CASE("validate: a peer with a NUL, a control byte or non-ASCII is refused (issue 25)") {
    auto s = valid_spec();
    s.peer = std::string("127.0.0.1\0evil:7470", 20);
    CHECK(has(problem(s), "byte 0x00 at position 9"));
    s.peer = "host\xe9:7470";
    CHECK(has(problem(s), "byte 0xe9 at position 4"));
    s.peer = "a b:7470";
    CHECK(has(problem(s), "byte 0x20"));
    s.peer = std::string(301, 'a');
    CHECK(has(problem(s), "301 bytes long"));
    s.peer = "[fe80::1%eth0]:7470";
    CHECK(problem(s).empty());
}

TEST_CASE("validate: sizes in range, ascending and unique") {
    auto s = valid_spec();
    s.sizes = {0, 64};
    CHECK(has(problem(s), "size 0 is out of range"));
    s.sizes = {64, (1ull << 30) + 1};
    CHECK(has(problem(s), "out of range"));
    s.sizes = {1, 1ull << 30};
    CHECK(problem(s).empty());
    s.sizes = {4096, 64};
    CHECK(has(problem(s), "ascending and unique"));
    s.sizes = {64, 64};
    CHECK(has(problem(s), "ascending and unique"));
}

TEST_CASE("validate: streams between 1 and the limit") {
    auto s = valid_spec();
    s.streams = 0;
    CHECK(has(problem(s), "streams 0 is out of range: use 1..64"));
    s.streams = 65;
    CHECK(has(problem(s), "streams 65"));
    s.streams = 64;
    CHECK(problem(s).empty());
    run_limits lim;
    lim.max_streams = 8;
    s.streams = 9;
    CHECK(has(problem(s, lim), "use 1..8"));
    s.streams = 8;
    CHECK(problem(s, lim).empty());
}

TEST_CASE("validate: iterations and duration fix the length, one at a time") {
    auto s = valid_spec();
    s.iterations = 1000;
    s.duration_s = 2.0;
    CHECK(has(problem(s), "give one of them"));

    s.duration_s.reset();
    CHECK(problem(s).empty());
    CHECK_FALSE(s.adaptive());
    s.iterations = 0;
    CHECK(has(problem(s), "iterations 0 is out of range"));
    s.iterations = 100'000'001;
    CHECK(has(problem(s), "iterations 100000001"));
    run_limits lim;
    lim.max_iterations = 10;
    s.iterations = 11;
    CHECK(has(problem(s, lim), "use 1..10"));

    s.iterations.reset();
    s.duration_s = 2.0;
    CHECK(problem(s).empty());
    CHECK_FALSE(s.adaptive());
}

TEST_CASE("validate: RDMA takes --iterations for latency only, refused at submission") {
    auto s = valid_spec();
    s.transport = "rdma";
    s.iterations = 1000;
    s.tests = {test_kind::latency};
    CHECK(problem(s).empty());
    for (auto t : {test_kind::bandwidth, test_kind::bidir}) {
        s.tests = {test_kind::latency, t};
        CHECK(has(problem(s), "--iterations is not supported for RDMA bandwidth and bidir points"));
    }
    s.iterations.reset();
    s.duration_s = 1.0;
    CHECK(problem(s).empty());
    s.transport = "tcp";  // TCP counts iterations for every test
    s.duration_s.reset();
    s.iterations = 1000;
    CHECK(problem(s).empty());
}

TEST_CASE("validate: durations must be finite and within their bounds") {
    for (double bad : {-1.0, 0.0, 0.001, nan_v, inf_v, -inf_v, 61.0}) {
        CAPTURE(bad);
        auto s = valid_spec();
        s.duration_s = bad;
        CHECK(has(problem(s), "duration"));
        s = valid_spec();
        s.max_point_s = bad;
        CHECK(has(problem(s), "max point time"));
    }
    for (double bad : {-0.1, nan_v, inf_v, 10.5}) {
        CAPTURE(bad);
        auto s = valid_spec();
        s.warmup_s = bad;
        CHECK(has(problem(s), "warm-up"));
    }
    auto s = valid_spec();
    s.warmup_s = 0.0;  // no warm-up is allowed
    s.max_point_s = 0.01;
    CHECK(problem(s).empty());
    s.duration_s = 60.0;
    CHECK(problem(s).empty());
    run_limits lim;
    lim.max_duration_s = 5;
    CHECK(has(problem(s, lim), "0.01..5 s"));
}

TEST_CASE("validate: precision is a fraction in (0, 1)") {
    for (double bad : {0.0, 1.0, -0.01, 1.5, nan_v, inf_v}) {
        CAPTURE(bad);
        auto s = valid_spec();
        s.precision = bad;
        CHECK(has(problem(s), "precision"));
        CHECK(has(problem(s), "(0, 1)"));
    }
    auto s = valid_spec();
    s.precision = 0.5;
    CHECK(problem(s).empty());
    s.precision = 1e-6;
    CHECK(problem(s).empty());
}

TEST_CASE("validate: socket window from 4K to 1G") {
    auto s = valid_spec();
    s.window_bytes = 4095;
    CHECK(has(problem(s), "window 4095 bytes is out of range"));
    s.window_bytes = (1ull << 30) + 1;
    CHECK(has(problem(s), "4K..1G"));
    s.window_bytes = 4096;
    CHECK(problem(s).empty());
    s.window_bytes = 1ull << 30;
    CHECK(problem(s).empty());
}

TEST_CASE("validate: memory domains are host or cuda:N") {
    for (const char* good : {"host", "cuda:0", "cuda:7", "cuda:123"}) {
        CAPTURE(good);
        auto s = valid_spec();
        s.local_memory = good;
        s.remote_memory = good;
        CHECK(problem(s).empty());
    }
    for (const char* bad : {"", "Host", "gpu0", "cuda", "cuda:", "cuda:-1", "cuda:x", "CUDA:0", "cuda:1234", "cuda:0 ", " host"}) {
        CAPTURE(bad);
        auto s = valid_spec();
        s.local_memory = bad;
        CHECK(has(problem(s), "local memory"));
        CHECK(has(problem(s), "host or cuda:N"));
        s = valid_spec();
        s.remote_memory = bad;
        CHECK(has(problem(s), "remote memory"));
    }
}

TEST_CASE("validate: GPU memory over RDMA refuses what the CPU would have to read") {
    auto s = valid_spec();
    s.transport = "rdma";
    s.tests = {test_kind::latency, test_kind::bandwidth};
    s.op = rdma_op::send;
    s.local_memory = "cuda:0";
    CHECK(problem(s).empty());  // SEND latency and bandwidth are fine
    s.verify = true;
    CHECK(has(problem(s), "--verify with GPU memory over RDMA"));
    s.verify = false;
    s.op = rdma_op::write;
    CHECK(has(problem(s), "use --op send for latency"));
    s.tests = {test_kind::bandwidth};
    CHECK(problem(s).empty());  // WRITE bandwidth does not poll
    s.local_memory = "host";
    s.remote_memory = "cuda:1";
    s.tests = {test_kind::latency};
    CHECK(has(problem(s), "use --op send for latency"));  // either side's GPU memory counts
    s.remote_memory = "host";
    s.verify = true;
    CHECK(problem(s).empty());  // host memory: everything goes
    s.transport = "tcp";
    s.local_memory = s.remote_memory = "cuda:0";
    CHECK(problem(s).empty());  // TCP with GPU memory verifies through the staging chunks
}

TEST_CASE("validate: RDMA settings and CPU numbers") {
    auto s = valid_spec();
    s.gid_index = -1;
    CHECK(has(problem(s), "GID index -1"));
    s.gid_index = 1024;
    CHECK(has(problem(s), "0..1023"));
    s.gid_index = 0;
    CHECK(problem(s).empty());
    s.gid_index = 1023;
    CHECK(problem(s).empty());

    s = valid_spec();
    s.tx_depth = 0;
    CHECK(has(problem(s), "tx-depth 0"));
    s.tx_depth = 8193;
    CHECK(has(problem(s), "1..8192"));
    s.tx_depth = 8192;
    CHECK(problem(s).empty());

    s = valid_spec();
    s.rdma_port = 0;
    CHECK(has(problem(s), "RDMA port 0"));
    s.rdma_port = 256;
    CHECK(has(problem(s), "1..255"));

    s = valid_spec();
    s.cpus = {0, -1};
    CHECK(has(problem(s), "CPU -1"));
    s.cpus = {0, 65536};
    CHECK(has(problem(s), "CPU 65536"));
    s.cpus = {0, 65535};
    CHECK(problem(s).empty());
}

TEST_CASE("names of kinds parse back; unknown names list the accepted ones") {
    for (auto k : {test_kind::latency, test_kind::bandwidth, test_kind::bidir}) CHECK(parse_test_kind(to_string(k)) == k);
    for (auto k : {"tcp", "rdma"}) CHECK(transport_rules_of(k).name == k);
    for (auto k : {rdma_op::write, rdma_op::read, rdma_op::send}) CHECK(parse_rdma_op(to_string(k)) == k);
    CHECK_THROWS_WITH_AS(transport_rules_of("udp"), Contains("unknown transport 'udp': use one of tcp, rdma"), spec_error);
    CHECK_THROWS_WITH_AS(parse_rdma_op("atomic"), Contains("write, read, send"), spec_error);
}

TEST_CASE("parse_test_list: order kept, duplicates dropped, unknown names the accepted ones") {
    CHECK(parse_test_list("latency") == std::vector<test_kind>{test_kind::latency});
    CHECK(parse_test_list("latency,bandwidth") == std::vector<test_kind>{test_kind::latency, test_kind::bandwidth});
    CHECK(parse_test_list("bidir,latency,bidir") == std::vector<test_kind>{test_kind::bidir, test_kind::latency});
    CHECK_THROWS_WITH_AS(parse_test_list("latency,latancy"),
                         Contains("unknown test 'latancy': use one of latency, bandwidth, bidir"), spec_error);
    CHECK_THROWS_WITH_AS(parse_test_list("Latency"), Contains("latency, bandwidth, bidir"), spec_error);
    CHECK_THROWS_WITH_AS(parse_test_list(""), Contains("empty item"), spec_error);
    CHECK_THROWS_WITH_AS(parse_test_list("latency,"), Contains("empty item"), spec_error);
    CHECK_THROWS_WITH_AS(parse_test_list(",latency"), Contains("empty item"), spec_error);
    CHECK_THROWS_WITH_AS(parse_test_list("latency,,bidir"), Contains("'latency,,bidir'"), spec_error);
}

TEST_CASE("parse_cpu_list: numbers and ranges") {
    CHECK(parse_cpu_list("5") == std::vector<int>{5});
    CHECK(parse_cpu_list("0,2-3") == std::vector<int>{0, 2, 3});
    CHECK(parse_cpu_list("4-4") == std::vector<int>{4});
    CHECK(parse_cpu_list("8-11,1") == std::vector<int>{8, 9, 10, 11, 1});
    CHECK(parse_cpu_list("65535") == std::vector<int>{65535});
    CHECK_THROWS_WITH_AS(parse_cpu_list("3-1"), Contains("CPU range '3-1' runs backwards"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list("a"), Contains("'a' is not a CPU number"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list(""), Contains("is not a CPU number"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list("1,"), Contains("is not a CPU number"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list("1-"), Contains("is not a CPU number"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list("-1"), Contains("is not a CPU number"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_list("123456"), Contains("'123456'"), spec_error);
    CHECK_THROWS_AS(parse_cpu_list("1 ,2"), spec_error);
    CHECK_THROWS_AS(parse_cpu_list("1-2-3"), spec_error);
}

TEST_CASE("run_spec_from_json: a peer alone gives the defaults") {
    const auto s = run_spec_from_json(json{{"peer", "node2:7470"}});
    CHECK(s.peer == "node2:7470");
    CHECK(s.transport == "tcp");
    CHECK(s.tests == std::vector<test_kind>{test_kind::latency, test_kind::bandwidth});
    // Default sizes: 1..4M, the powers of two from 1 B to 4 MiB.
    REQUIRE(s.sizes.size() == 23);
    CHECK(s.sizes.front() == 1);
    CHECK(s.sizes.back() == 4ull << 20);
    CHECK(s.streams == 1);
    CHECK(s.adaptive());
    CHECK(s.local_memory == "host");
    CHECK(s.remote_memory == "host");
}

TEST_CASE("run_spec_from_json: sizes as a string or an array") {
    auto s = run_spec_from_json(json{{"peer", "n:1"}, {"sizes", "1..4,64,4K"}});
    CHECK(s.sizes == std::vector<std::uint64_t>{1, 2, 4, 64, 4096});
    s = run_spec_from_json(json{{"peer", "n:1"}, {"sizes", {64, 4096}}});
    CHECK(s.sizes == std::vector<std::uint64_t>{64, 4096});
    // Was a bug (issue 12): out of order or repeated sizes were sorted silently. The API
    // measures what it is sent or refuses it, naming the list to send.
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {4096, 64, 64}}}), "send [64, 4096] or \"64,4K\""));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", "64,4K,1..4"}}), "field 'sizes' must list sizes in ascending order"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", "64,64"}}), "without repeats"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", json::array()}}), "no sizes"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {64, 0}}}), "size 0"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {64, (1ull << 30) + 1}}}), "out of range"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", "4M..1"}}), "'4M..1'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", 64}}), "'sizes'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {64, "4K"}}}), "'sizes[]'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {64, 1.5}}}), "'sizes[]'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizes", {64, -1}}}), "'sizes[]'"));
}

TEST_CASE("run_spec_from_json: tests and cpus as a string or an array") {
    auto s = run_spec_from_json(json{{"peer", "n:1"}, {"tests", "bidir"}, {"cpus", "0,2-3"}});
    CHECK(s.tests == std::vector<test_kind>{test_kind::bidir});
    CHECK(s.cpus == std::vector<int>{0, 2, 3});
    s = run_spec_from_json(json{{"peer", "n:1"}, {"tests", {"bandwidth", "latency", "bandwidth"}}, {"cpus", {1, 5}}});
    CHECK(s.tests == std::vector<test_kind>{test_kind::bandwidth, test_kind::latency});
    CHECK(s.cpus == std::vector<int>{1, 5});
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"tests", {"latency", "ping"}}}), "unknown test 'ping'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"tests", json::array()}}), "no tests"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"tests", 3}}), "'tests'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"tests", {1}}}), "'tests[]'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"cpus", json::object()}}), "'cpus'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"cpus", {"0"}}}), "'cpus[]'"));
}

TEST_CASE("run_spec_from_json: unknown fields are rejected, naming them") {
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"sizez", "1..4M"}}), "unknown field 'sizez'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"Streams", 2}}), "'Streams'"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"", 2}}), "unknown field ''"));
}

TEST_CASE("run_spec_from_json: not an object, or no peer") {
    CHECK(has(json_problem(json::array({1, 2})), "must be a JSON object, not array"));
    CHECK(has(json_problem(json("node2")), "not string"));
    CHECK(has(json_problem(json(nullptr)), "JSON object"));
    CHECK(has(json_problem(json::object()), "no 'peer'"));
    CHECK(has(json_problem(json{{"streams", 2}}), "no 'peer'"));
    CHECK(has(json_problem(json{{"peer", ""}}), "no peer"));
}

TEST_CASE("run_spec_from_json: wrong types are rejected, naming the field") {
    const json base = {{"peer", "n:1"}};
    struct bad_field {
        const char* key;
        json value;
    };
    const bad_field cases[] = {
        {"peer", 5},
        {"peer", nullptr},
        {"transport", 1},
        {"transport", "udp"},
        {"streams", "4"},
        {"streams", -1},
        {"streams", 1.5},
        {"streams", 5'000'000'000ull},
        {"streams", true},
        {"reverse", 1},
        {"reverse", "true"},
        {"iterations", "100"},
        {"iterations", -5},
        {"duration_s", "2"},
        {"duration_s", true},
        {"precision", "0.01"},
        {"precision", nullptr},
        {"max_point_s", json::array()},
        {"warmup_s", "0.1"},
        {"verify", "yes"},
        {"busy_poll", 0},
        {"window_bytes", "1M"},
        {"window_bytes", 65536.5},
        {"op", 2},
        {"op", "atomic"},
        {"tx_depth", -1},
        {"rdma_device", 0},
        {"rdma_port", "1"},
        {"gid_index", -1},
        {"gid_index", "3"},
        {"local_memory", 0},
        {"remote_memory", json::object()},
    };
    for (const auto& c : cases) {
        auto j = base;
        j[c.key] = c.value;
        CAPTURE(j.dump());
        const auto msg = json_problem(j);
        // Either the field is named ('streams') or the bad value is ("unknown transport 'udp'").
        const bool names_it = has(msg, std::string("'") + c.key + "'") || has(msg, "transport") || has(msg, "operation");
        CHECK_MESSAGE(names_it, msg);
    }
}

TEST_CASE("run_spec_from_json: null leaves optional lengths unset") {
    const auto s = run_spec_from_json(
        json{{"peer", "n:1"}, {"iterations", nullptr}, {"duration_s", nullptr}, {"window_bytes", nullptr}, {"gid_index", nullptr}});
    CHECK_FALSE(s.iterations);
    CHECK_FALSE(s.duration_s);
    CHECK_FALSE(s.window_bytes);
    CHECK_FALSE(s.gid_index);
    CHECK(s.adaptive());
}

TEST_CASE("run_spec_from_json: validates against the given limits") {
    run_limits lim;
    lim.max_streams = 4;
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"streams", 5}}, lim), "use 1..4"));
    CHECK(run_spec_from_json(json{{"peer", "n:1"}, {"streams", 4}}, lim).streams == 4);
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"iterations", 10}, {"duration_s", 1.0}}), "give one of them"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"precision", 1.0}}), "precision"));
    CHECK(has(json_problem(json{{"peer", "n:1"}, {"local_memory", "gpu:0"}}), "local memory 'gpu:0'"));
}

TEST_CASE("JSON round trip: to_json then run_spec_from_json gives the same spec") {
    run_spec a;
    a.peer = "[fe80::1]:7471";
    a.transport = "rdma";
    a.tests = {test_kind::bidir, test_kind::latency};
    a.sizes = {1, 100, 4096, 1ull << 30};
    a.streams = 4;
    a.reverse = true;
    a.duration_s = 2.5;
    a.precision = 0.05;
    a.max_point_s = 3.25;
    a.warmup_s = 0.25;
    a.verify = false;  // true with GPU memory over RDMA is refused; the fixed-iterations TCP case carries it
    a.busy_poll = true;
    a.window_bytes = 1 << 20;
    a.cpus = {1, 3};
    a.op = rdma_op::read;
    a.tx_depth = 64;
    a.rdma_device = "mlx5_0";
    a.rdma_port = 2;
    a.gid_index = 3;
    a.local_memory = "cuda:1";
    a.remote_memory = "host";
    validate(a);

    SUBCASE("as a JSON value") { check_same(a, run_spec_from_json(to_json(a))); }
    SUBCASE("through text") { check_same(a, run_spec_from_json(json::parse(to_json(a).dump()))); }
    SUBCASE("fixed iterations, defaults elsewhere") {
        run_spec b;
        b.peer = "node2:7470";
        b.sizes = {64};
        b.iterations = 12345;
        b.verify = true;
        check_same(b, run_spec_from_json(json::parse(to_json(b).dump())));
    }
    SUBCASE("an awkward double survives") {
        a.precision = 0.1 + 0.2;  // 0.30000000000000004
        a.warmup_s = 1.0 / 3.0;
        check_same(a, run_spec_from_json(json::parse(to_json(a).dump())));
    }
}

TEST_CASE("to_json writes every field, null for unset optionals") {
    const auto j = to_json(valid_spec());
    for (const char* key : {"peer", "transport", "tests", "sizes", "streams", "reverse", "iterations", "duration_s", "precision",
                            "max_point_s", "warmup_s", "verify", "busy_poll", "window_bytes", "cpus", "op", "tx_depth",
                            "rdma_device", "rdma_port", "gid_index", "local_memory", "remote_memory"}) {
        CAPTURE(key);
        CHECK(j.contains(key));
    }
    CHECK(j.size() == 22);
    CHECK(j["iterations"].is_null());
    CHECK(j["duration_s"].is_null());
    CHECK(j["window_bytes"].is_null());
    CHECK(j["gid_index"].is_null());
    CHECK(j["tests"] == json{"latency", "bandwidth"});
    CHECK(j["sizes"] == json{64, 4096});
    CHECK(j["transport"] == "tcp");
}

}  // TEST_SUITE

TEST_CASE("validate: RDMA queue pairs are bounded by max_qps, TCP streams by max_streams") {
    auto s = valid_spec();
    run_limits lim;
    lim.max_streams = 16;
    lim.max_qps = 4;
    s.streams = 8;
    CHECK(problem(s, lim).empty());  // TCP: max_streams
    s.transport = "rdma";
    const auto e = problem(s, lim);
    CHECK(has(e, "streams 8 is out of range for RDMA: use 1..4 queue pairs per direction"));
    CHECK(has(e, "limits.max_qps"));
    s.streams = 4;
    CHECK(problem(s, lim).empty());
    s.transport = "tcp";
    s.streams = 17;
    CHECK(has(problem(s, lim), "limits.max_streams of this daemon is 16"));
}

TEST_CASE("validate: a fixed-length point beyond max_bytes_per_point is refused, saying how many iterations fit") {
    auto s = valid_spec();
    s.sizes = {64, 65536};
    s.tests = {test_kind::bandwidth};
    s.streams = 2;
    s.iterations = 100;  // 100 x 64 KiB x 2 streams = 12.5 MiB per direction
    run_limits lim;
    lim.max_bytes_per_point = 1ull << 20;  // 1 MiB
    const auto e = problem(s, lim);
    CHECK(has(e, "the 64 KiB bandwidth point would move 12.5 MiB per direction (100 iterations x 64 KiB x 2 streams)"));
    CHECK(has(e, "more than 1 MiB allowed per point"));
    CHECK(has(e, "limits.max_bytes_per_point"));
    CHECK(has(e, "use at most 8 iterations"));
    s.iterations = 8;
    CHECK(problem(s, lim).empty());
    // Latency moves one stream's messages each way.
    s.tests = {test_kind::latency};
    s.iterations = 16;
    CHECK(problem(s, lim).empty());
    s.iterations = 17;
    CHECK(has(problem(s, lim), "latency point would move"));
    CHECK(fixed_point_bytes(s, test_kind::latency, 65536) == 17 * 65536);
    CHECK(fixed_point_bytes(s, test_kind::bandwidth, 65536) == 2 * 17 * 65536);
    s.iterations = ~0ull / 2;
    CHECK(fixed_point_bytes(s, test_kind::bandwidth, 65536) == ~0ull);  // saturates
}

TEST_CASE("validate: an adaptive point must fit one message per stream under max_bytes_per_point") {
    auto s = valid_spec();
    s.sizes = {1ull << 20};
    s.streams = 4;
    run_limits lim;
    lim.max_bytes_per_point = 2ull << 20;
    CHECK(has(problem(s, lim), "one 1 MiB message on each of 4 streams is already 4 MiB per direction"));
    s.streams = 2;
    CHECK(problem(s, lim).empty());
    s.duration_s = 5.0;  // duration points stop at the limit too
    CHECK(problem(s, lim).empty());
}

TEST_CASE("run_limits: defaults") {
    const run_limits lim;
    CHECK(lim.max_qps == 64);
    CHECK(lim.max_bytes_per_point == (16ull << 40));
    CHECK(lim.max_queued_runs == 64);
    CHECK(lim.max_connections == 1024);
}

}  // namespace run_spec_test
