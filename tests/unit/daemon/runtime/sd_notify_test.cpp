// systemd notifications against a real $NOTIFY_SOCKET: an AF_UNIX datagram socket that
// this test binds, as systemd does, and reads back.
#include "daemon/runtime/sd_notify.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <doctest/doctest.h>
#include <filesystem>
#include <optional>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace sd_notify_test {  // one per test file: the unit tests are built in batches (unity build)

namespace sd = meshperf::daemon::sd;
using namespace std::chrono_literals;

namespace {

// Sets an environment variable for the scope and restores what was there.
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~scoped_env() {
        if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

// The service manager's end: a bound datagram socket in a private temporary directory
// (or in the abstract namespace), with $NOTIFY_SOCKET pointing at it.
class fake_manager {
public:
    explicit fake_manager(bool abstract = false) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        socklen_t len;
        if (abstract) {
            address_ = "@meshperf-sd-test-" + std::to_string(::getpid());
            std::memcpy(addr.sun_path + 1, address_.data() + 1, address_.size() - 1);
            len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
        } else {
            std::string tmpl = (std::filesystem::temp_directory_path() / "meshperf-sd-XXXXXX").string();
            REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
            dir_ = tmpl;
            address_ = dir_ + "/notify";
            REQUIRE(address_.size() < sizeof addr.sun_path);
            std::memcpy(addr.sun_path, address_.c_str(), address_.size() + 1);
            len = sizeof addr;
        }
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0);
        env_.emplace("NOTIFY_SOCKET", address_.c_str());
    }
    ~fake_manager() {
        env_.reset();
        ::close(fd_);
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }
    fake_manager(const fake_manager&) = delete;
    fake_manager& operator=(const fake_manager&) = delete;

    // The next datagram, or nullopt when none arrives within a second.
    std::optional<std::string> receive() {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 1000) != 1) return std::nullopt;
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n < 0) return std::nullopt;
        return std::string(buf, static_cast<std::size_t>(n));
    }
    bool nothing_pending() {
        pollfd p{fd_, POLLIN, 0};
        return ::poll(&p, 1, 0) == 0;
    }
    const std::string& address() const { return address_; }

private:
    int fd_ = -1;
    std::string dir_;
    std::string address_;
    std::optional<scoped_env> env_;
};

}  // namespace

TEST_CASE("sd_notify: readiness, status, stopping and watchdog reach a real NOTIFY_SOCKET") {
    fake_manager manager;

    auto r = sd::ready();
    CHECK(r.sent);
    CHECK_FALSE(r.error);
    CHECK(manager.receive() == "READY=1");

    CHECK(sd::ready("listening on 0.0.0.0:7470"));
    CHECK(manager.receive() == "READY=1\nSTATUS=listening on 0.0.0.0:7470");

    CHECK(sd::status("2 runs queued, 1 running"));
    CHECK(manager.receive() == "STATUS=2 runs queued, 1 running");

    CHECK(sd::watchdog());
    CHECK(manager.receive() == "WATCHDOG=1");

    CHECK(sd::stopping("draining 3 sessions"));
    CHECK(manager.receive() == "STOPPING=1\nSTATUS=draining 3 sessions");

    CHECK(sd::extend_timeout(90s));
    CHECK(manager.receive() == "EXTEND_TIMEOUT_USEC=90000000");

    CHECK(manager.nothing_pending());
}

TEST_CASE("sd_notify: the abstract socket namespace (@name) works too") {
    fake_manager manager(/*abstract=*/true);
    REQUIRE(manager.address().front() == '@');
    CHECK(sd::watchdog());
    CHECK(manager.receive() == "WATCHDOG=1");
}

TEST_CASE("sd_notify: status text from the network cannot inject assignments") {
    fake_manager manager;
    CHECK(sd::status("peer says hi\nREADY=1\r\nWATCHDOG_USEC=1"));
    CHECK(manager.receive() == "STATUS=peer says hi READY=1  WATCHDOG_USEC=1");
    CHECK(sd::ready(std::string_view("a\0b\tc", 5)));
    CHECK(manager.receive() == "READY=1\nSTATUS=a b c");
    CHECK(sd::sanitize_status("plain text, ünïcode kept") == "plain text, ünïcode kept");
}

TEST_CASE("sd_notify: without a service manager nothing is sent and nothing fails") {
    scoped_env unset("NOTIFY_SOCKET", nullptr);
    const auto r = sd::ready("x");
    CHECK_FALSE(r.sent);
    CHECK(r.no_manager());
    CHECK_FALSE(r.error);

    scoped_env empty("NOTIFY_SOCKET", "");
    CHECK(sd::watchdog().no_manager());
}

TEST_CASE("sd_notify: an unusable NOTIFY_SOCKET is reported, not thrown") {
    SUBCASE("relative path") {
        scoped_env bad("NOTIFY_SOCKET", "run/notify");
        const auto r = sd::ready();
        CHECK_FALSE(r.sent);
        CHECK(r.error == std::errc::address_family_not_supported);
    }
    SUBCASE("vsock (systemd 254+) is not spoken") {
        scoped_env bad("NOTIFY_SOCKET", "vsock:2:1234");
        CHECK(sd::ready().error == std::errc::address_family_not_supported);
    }
    SUBCASE("path longer than sun_path") {
        const std::string longpath = "/" + std::string(200, 'x');
        scoped_env bad("NOTIFY_SOCKET", longpath.c_str());
        CHECK(sd::ready().error == std::errc::address_family_not_supported);
    }
    SUBCASE("nobody listening") {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("meshperf-sd-absent-" + std::to_string(::getpid()));
        scoped_env bad("NOTIFY_SOCKET", (dir / "notify").c_str());
        const auto r = sd::watchdog();
        CHECK_FALSE(r.sent);
        CHECK(r.error);
        CHECK_FALSE(r.no_manager());
    }
}

TEST_CASE("sd_notify: watchdog interval from WATCHDOG_USEC and WATCHDOG_PID") {
    const pid_t self = ::getpid();
    const std::string me = std::to_string(self);
    const std::string other = std::to_string(self + 1);

    CHECK(sd::parse_watchdog("30000000", nullptr, self) == std::chrono::microseconds(30'000'000));
    CHECK(sd::parse_watchdog("30000000", me.c_str(), self) == 30s);
    CHECK(sd::parse_watchdog("30000000", "", self) == 30s);
    CHECK_FALSE(sd::parse_watchdog("30000000", other.c_str(), self));  // meant for another process
    CHECK_FALSE(sd::parse_watchdog(nullptr, nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("0", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("-5", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("30s", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog(" 30", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("99999999999999999999999", nullptr, self));
    CHECK_FALSE(sd::parse_watchdog("30000000", "12x", self));

    {
        scoped_env usec("WATCHDOG_USEC", "30000000");
        scoped_env pid("WATCHDOG_PID", me.c_str());
        CHECK(sd::watchdog_timeout() == 30s);
        CHECK(sd::watchdog_ping_interval() == 15s);
    }
    {
        scoped_env usec("WATCHDOG_USEC", "30000000");
        scoped_env pid("WATCHDOG_PID", other.c_str());
        CHECK_FALSE(sd::watchdog_ping_interval());
    }
    {
        scoped_env usec("WATCHDOG_USEC", nullptr);
        CHECK_FALSE(sd::watchdog_timeout());
        CHECK_FALSE(sd::watchdog_ping_interval());
    }
    {
        scoped_env usec("WATCHDOG_USEC", "1");
        scoped_env pid("WATCHDOG_PID", nullptr);
        CHECK(sd::watchdog_ping_interval() == std::chrono::microseconds(1));
    }
}

TEST_CASE("sd_notify: keepalives at the advertised interval arrive as WATCHDOG=1") {
    fake_manager manager;
    scoped_env usec("WATCHDOG_USEC", "40000");  // 40 ms, as WatchdogSec=40ms would set
    scoped_env pid("WATCHDOG_PID", std::to_string(::getpid()).c_str());
    const auto every = sd::watchdog_ping_interval();
    REQUIRE(every == std::chrono::microseconds(20'000));
    // What the daemon's timer does: ping, sleep an interval, ping again.
    for (int i = 0; i < 3; ++i) {
        CHECK(sd::watchdog());
        CHECK(manager.receive() == "WATCHDOG=1");
        ::usleep(static_cast<useconds_t>(every->count()));
    }
    CHECK(manager.nothing_pending());
}

}  // namespace sd_notify_test
