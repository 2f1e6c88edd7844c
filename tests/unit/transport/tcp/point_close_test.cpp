// transport/tcp/point_side: a stopped point ends within its close bound on a path that
// takes bytes slowly (a lossy link's pace) or not at all, and its streams end cleanly.
// The paths here are loopback sockets whose far end reads a trickle or nothing; the tbf
// link with a shallow queue is tests/netns/retransmits.sh's.
#include "core/run_spec.hpp"
#include "transport/socket.hpp"
#include "transport/tcp/point_side.hpp"
#include "tests/unit/transport/tcp/loopback_pairs.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace point_close_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::transport::tcp;
using transport::socket_fd;
using steady = std::chrono::steady_clock;

namespace {


core::run_spec bandwidth_spec(std::uint64_t size) {
    core::run_spec spec;
    spec.tests = {core::test_kind::bandwidth};
    spec.sizes = {size};
    spec.window_bytes = 64 * 1024;  // small socket buffers: the far end's pace shows at once
    return spec;
}

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

}  // namespace

TEST_CASE("a stopped sender on a path that takes a trickle ends within the close bound, part-way through its message") {
    auto [near, far] = test::loopback_tcp_pair();
    // The far end reads 4 KiB every 20 ms: ~200 KB/s, so a 64 MiB message would take minutes.
    std::atomic<bool> done{false};
    std::thread trickle([fd = far.get(), &done] {
        std::vector<char> buf(4096);
        while (!done.load()) {
            if (::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT) == 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    const auto spec = bandwidth_spec(64ull << 20);
    std::vector<socket_fd> fds;
    fds.push_back(std::move(near));
    point_side side(spec, core::test_kind::bandwidth, 64ull << 20, std::move(fds), {stream_role::send});
    side.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto t0 = steady::now();
    side.stop();
    side.join();
    const double took = seconds_since(t0);
    done.store(true);
    trickle.join();
    // Stop within one send slice (0.2 s), drain at most 0.8 s: 1 s, with slack for a loaded host.
    CHECK(took < core::point_close_bound_s + 1.0);
    CHECK(side.error().empty());
    CHECK(side.sent_bytes() == 0);  // no whole message went out: it was abandoned part-way
}

TEST_CASE("a stopped receiver whose path still delivers but never ends its stream closes at the close bound, cleanly") {
    auto [near, far] = test::loopback_tcp_pair();
    const auto spec = bandwidth_spec(1 << 20);
    std::vector<socket_fd> fds;
    fds.push_back(std::move(near));
    point_side side(spec, core::test_kind::bandwidth, 1 << 20, std::move(fds), {stream_role::receive});
    side.start();
    // The far end trickles 100 bytes every 50 ms and never closes: a lossy path's drain.
    std::atomic<bool> done{false};
    std::thread trickle([fd = far.get(), &done] {
        const char some[100] = {};
        while (!done.load()) {
            ::send(fd, some, sizeof some, MSG_NOSIGNAL);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto t0 = steady::now();
    side.stop();
    side.join();  // only the close bound ends it
    const double took = seconds_since(t0);
    done.store(true);
    trickle.join();
    CHECK(took >= close_bound_ms / 1000.0 - 0.05);
    CHECK(took < close_bound_ms / 1000.0 + 1.0);
    CHECK(side.error().empty());
    REQUIRE(side.received_bytes().size() == 1);
    CHECK(side.received_bytes()[0] >= 100);
}

TEST_CASE("a stopped receiver whose path delivers nothing after the stop is not closed as clean: a cut path fails") {
    auto [near, far] = test::loopback_tcp_pair();
    const auto spec = bandwidth_spec(1 << 20);
    std::vector<socket_fd> fds;
    fds.push_back(std::move(near));
    point_side side(spec, core::test_kind::bandwidth, 1 << 20, std::move(fds), {stream_role::receive});
    side.start();
    const char some[1000] = {};
    REQUIRE(::send(far.get(), some, sizeof some, 0) == static_cast<ssize_t>(sizeof some));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    side.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(close_bound_ms + 200));
    side.close_overdue();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(side.finished());  // left to the data-stream timeout, which fails it
    side.abort();
    side.join();
}

}  // namespace point_close_test
