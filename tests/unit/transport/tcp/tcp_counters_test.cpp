// transport/tcp/tcp_counters: TCP_INFO snapshots of real loopback sockets, the delta of two
// snapshots, and point_side's sending streams read around a point. What this does not show:
// retransmits on a lossy path (tests/netns/retransmits.sh drops packets with tbf for that).
#include "core/point_counters.hpp"
#include "core/run_spec.hpp"
#include "transport/socket.hpp"
#include "transport/tcp/point_side.hpp"
#include "transport/tcp/tcp_counters.hpp"
#include "tests/unit/transport/tcp/loopback_pairs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace tcp_counters_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::transport::tcp;
using transport::socket_fd;

namespace {


// Sends `bytes` from `from` while a thread drains `to`.
void move_bytes(int from, int to, std::size_t bytes) {
    std::thread drain([to, bytes] {
        std::vector<char> buf(1 << 16);
        std::size_t got = 0;
        while (got < bytes) {
            const auto n = ::recv(to, buf.data(), buf.size(), 0);
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
    });
    std::vector<char> data(1 << 16, 'x');
    std::size_t sent = 0;
    while (sent < bytes) {
        const auto n = ::send(from, data.data(), std::min(data.size(), bytes - sent), MSG_NOSIGNAL);
        REQUIRE(n > 0);
        sent += static_cast<std::size_t>(n);
    }
    drain.join();
}

tcp_snapshot snap(std::uint32_t retrans, std::uint32_t segs, std::uint32_t rtt, std::uint32_t cwnd) {
    tcp_snapshot s;
    s.total_retrans = retrans;
    s.segs_out = segs;
    s.rtt_us = rtt;
    s.snd_cwnd = cwnd;
    return s;
}

}  // namespace

TEST_SUITE("tcp_counters") {

TEST_CASE("a loopback socket that sent data: segments sent grow, nothing retransmitted") {
    auto [client, server] = test::loopback_tcp_pair();
    const auto before = read_tcp_snapshot(client.get());
    REQUIRE(before.has_value());
    move_bytes(client.get(), server.get(), 4u << 20);
    const auto after = read_tcp_snapshot(client.get());
    REQUIRE(after.has_value());
    CHECK(after->segs_out > before->segs_out);
    CHECK(after->snd_cwnd > 0);
    CHECK(after->rtt_us > 0);
    const auto d = tcp_counters_between(*before, *after);
    CHECK(d.segments_sent == after->segs_out - before->segs_out);
    // Loopback rarely retransmits, but can on a slow or loaded host (TSan CI: 4 segments), so
    // the count is checked against its definition, not against 0 (netns-retransmits pins 0).
    CHECK(d.retransmits <= d.segments_sent);
    CHECK(d.rtt_us.min <= d.rtt_us.max);
    CHECK(d.cwnd.min <= d.cwnd.max);
    CHECK_NOTHROW(core::check_sane(d, true));
}

TEST_CASE("no snapshot of an invalid descriptor or a socket that is not TCP: empty, never zeros") {
    CHECK_FALSE(read_tcp_snapshot(-1).has_value());
    CHECK_FALSE(read_tcp_snapshot(1'000'000).has_value());
    socket_fd udp(::socket(AF_INET, SOCK_DGRAM, 0));
    REQUIRE(udp);
    CHECK_FALSE(read_tcp_snapshot(udp.get()).has_value());
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    CHECK_FALSE(read_tcp_snapshot(fds[0]).has_value());
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("delta of two snapshots: counts subtract (across a 32-bit wrap), rtt and cwnd are ranges") {
    auto d = tcp_counters_between(snap(3, 1000, 250, 40), snap(40, 13034, 180, 96));
    CHECK(d.retransmits == 37);
    CHECK(d.segments_sent == 12034);
    CHECK(d.rtt_us.min == 180);
    CHECK(d.rtt_us.max == 250);
    CHECK(d.cwnd.min == 40);
    CHECK(d.cwnd.max == 96);
    d = tcp_counters_between(snap(0xFFFFFFF0u, 0xFFFFFF00u, 100, 10), snap(5, 0x100, 100, 10));
    CHECK(d.retransmits == 21);
    CHECK(d.segments_sent == 0x200);
    const auto sum = core::combined(tcp_counters_between(snap(0, 0, 100, 10), snap(2, 100, 300, 20)),
                                    tcp_counters_between(snap(0, 0, 50, 30), snap(1, 50, 80, 35)));
    CHECK(sum.retransmits == 3);
    CHECK(sum.segments_sent == 150);
    CHECK(sum.rtt_us.min == 50);
    CHECK(sum.rtt_us.max == 300);
    CHECK(sum.cwnd.min == 10);
    CHECK(sum.cwnd.max == 35);
    CHECK(sum.retransmit_share() == doctest::Approx(0.02));
}

TEST_CASE("readings inside the window: the median RTT, the largest variance, lost and reordering, the delivery-rate range") {
    auto at = [](std::uint32_t retrans, std::uint32_t segs, std::uint32_t rtt, std::uint32_t rttvar, std::uint64_t rate,
                 std::uint32_t lost) {
        tcp_snapshot s = snap(retrans, segs, rtt, 20);
        s.rttvar_us = rttvar;
        s.delivery_rate = rate;
        s.lost = lost;
        s.reordering = 3;
        return s;
    };
    std::vector<stream_tcp_readings> streams(2);
    // Stream 1: the warm-up's rate (999) before the window must not count; a tick without an
    // estimate (0) neither.
    streams[0] = {at(0, 0, 100, 10, 999, 0), {at(1, 50, 400, 80, 2000, 2), at(2, 90, 300, 30, 0, 0)}, at(2, 100, 200, 20, 3000, 0)};
    streams[1] = {at(5, 10, 150, 5, 0, 0), {at(5, 40, 250, 15, 1000, 1)}, at(6, 70, 120, 12, 1500, 0)};
    const auto c = tcp_counters_of(streams);
    CHECK(c.retransmits == 3);
    CHECK(c.segments_sent == 160);
    CHECK(c.interval_readings == 3);
    CHECK(c.rtt_us.min == 100);
    CHECK(c.rtt_us.max == 400);
    REQUIRE(c.rtt_median_us);
    CHECK(*c.rtt_median_us == 200);  // the median of 100 400 300 200 150 250 120
    CHECK(c.rttvar_max_us == 80u);
    CHECK(c.lost_max == 2u);
    CHECK(c.reordering_max == 3u);
    REQUIRE(c.delivery_rate);
    CHECK(c.delivery_rate->min == 1000);
    CHECK(c.delivery_rate->max == 3000);
    CHECK_NOTHROW(core::check_sane(c, true));
}

TEST_CASE("point_side: the sending streams' counters around a point; a receiving side has none") {
    core::run_spec spec;
    spec.iterations = 50;
    spec.streams = 2;
    std::vector<socket_fd> left, right;
    for (int i = 0; i < 2; ++i) {
        auto [c, s] = test::loopback_tcp_pair();
        left.push_back(std::move(c));
        right.push_back(std::move(s));
    }
    const auto roles = initiator_roles(core::test_kind::bandwidth, 2, false);
    std::vector<stream_role> mirrored;
    for (auto r : roles) mirrored.push_back(mirror(r));
    const std::uint64_t size = 65536;
    point_side tx(spec, core::test_kind::bandwidth, size, std::move(left), roles);
    point_side rx(spec, core::test_kind::bandwidth, size, std::move(right), mirrored);
    CHECK_FALSE(tx.sent_tcp_counters().has_value());  // not read yet
    tx.read_tcp_counters_before_window();
    rx.read_tcp_counters_before_window();
    rx.start();
    tx.start();
    tx.read_tcp_counters_in_window();
    tx.join();
    rx.join();
    tx.read_tcp_counters_after_window();
    rx.read_tcp_counters_after_window();
    REQUIRE(tx.error() == "");
    REQUIRE(rx.error() == "");
    const auto c = tx.sent_tcp_counters();
    REQUIRE(c.has_value());
    // Both streams together moved (warm-up + 50) messages each: at most 64 KiB per segment.
    const std::uint64_t bytes = 2 * (warm_messages(size) + 50) * size;
    CHECK(c->segments_sent >= bytes / 65536);
    CHECK(c->retransmits <= c->segments_sent);  // not 0: loopback can retransmit on a loaded host
    CHECK(c->interval_readings == 2);          // one tick inside the window, both streams
    REQUIRE(c->rtt_median_us);
    CHECK(*c->rtt_median_us >= c->rtt_us.min);
    CHECK(*c->rtt_median_us <= c->rtt_us.max);
    CHECK_FALSE(rx.sent_tcp_counters().has_value());
}

}  // TEST_SUITE

}  // namespace tcp_counters_test
