#pragma once
/// The kernel's TCP_INFO of one connected socket: a snapshot, and what changed between two
/// snapshots of the same socket. Read by the controller around a point's measured window,
/// never by a stream's loop.
#include "core/point_counters.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace meshperf::transport::tcp {

/// One reading of a socket's TCP_INFO (struct tcp_info of <linux/tcp.h>).
struct tcp_snapshot {
    std::uint32_t total_retrans = 0;  ///< segments retransmitted over the connection's life
    std::uint32_t segs_out = 0;       ///< segments sent over its life, retransmissions included
    std::uint32_t rtt_us = 0;         ///< smoothed round-trip time, µs
    std::uint32_t rttvar_us = 0;      ///< its mean deviation, µs
    std::uint32_t snd_cwnd = 0;       ///< congestion window, segments
    std::uint64_t delivery_rate = 0;  ///< the kernel's latest delivery-rate estimate, bytes/s
    std::uint32_t lost = 0;           ///< segments presumed lost now
    std::uint32_t reordering = 0;     ///< reordering the connection has seen, segments
};

/// TCP_INFO of `fd` now. Empty when getsockopt fails (not a TCP socket, a closed or invalid
/// descriptor) or the kernel's tcp_info is too short to hold segs_out: never zeros.
std::optional<tcp_snapshot> read_tcp_snapshot(int fd);

/// What the socket did between two of its snapshots: retransmits and segments sent as
/// deltas (modulo 2^32, as the kernel counts them), rtt and cwnd as the range over the two.
core::tcp_point_counters tcp_counters_between(const tcp_snapshot& before, const tcp_snapshot& after);

/// Readings of one sending stream inside a point's window kept at most (4,000: 100 s of
/// 25 ms ticks); later ones are not kept, so memory stays bounded.
inline constexpr std::size_t max_readings_in_window = 4000;

/// One sending stream's readings: just before the window, inside it (a tick each), just after.
struct stream_tcp_readings {
    tcp_snapshot before;
    std::vector<tcp_snapshot> inside;
    tcp_snapshot after;
};

/// The counters of a side's sending streams together: retransmits and segments summed over
/// the streams (after − before each), rtt and cwnd ranges, the median RTT, the largest RTT
/// variance, lost and reordering, and the delivery-rate range (readings inside the window
/// and after it that have one) over every reading of every stream.
core::tcp_point_counters tcp_counters_of(std::span<const stream_tcp_readings> streams);

}  // namespace meshperf::transport::tcp
