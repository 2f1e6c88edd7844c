#pragma once
/// Latency points on one QP: ping-pong round trips timed by the active side.
///
/// Ops: write (each side RDMA WRITEs into the other's region; the receiver polls the last
/// byte, as perftest's ib_write_lat), send (SEND/RECV ping-pong), read (the active side
/// RDMA READs from the passive side's region; the passive side's CPU is not involved).
/// Protocol (docs/rdma.md): both sides construct their runner for the point (this arms the
/// QP); the passive side then tells the active side "ready" and calls run(); the active side
/// calls run() after "ready", as often as it likes (batches), then tells the passive side
/// "done"; the passive side sets its stop flag on "done" (or when the session is lost).
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/point.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace meshperf::transport::rdma {

/// The side that starts and times each round trip. One thread at a time.
class latency_active {
public:
    /// Arms QP qp of ep for the point: validates p, fills the pattern (verify), clears the
    /// receive region, tops up receives (send). Throws core::spec_error, rdma_error.
    latency_active(endpoint& ep, std::size_t qp, const point_params& p);

    /// Runs round trips until stop is true (checked between round trips) or rtt_ns is full,
    /// writing each round-trip time in nanoseconds (steady_clock, post to reply seen).
    /// Returns how many it wrote. May be called again for further batches; every call
    /// returns with no work request outstanding. Throws rdma_error after the loop when a
    /// completion failed or no reply came within peer_timeout; the endpoint is then unusable.
    std::size_t run(const std::atomic<bool>& stop, std::span<std::uint64_t> rtt_ns);

    /// Round trips completed over all calls.
    std::uint64_t round_trips() const noexcept { return iter_; }
    /// Replies checked against the pattern (verify; write and send check every reply, read
    /// every region read).
    const verify_report& verification() const noexcept { return verify_; }

private:
    endpoint* ep_;
    qp_slot* slot_;
    point_params p_;
    std::uint64_t iter_ = 0;
    std::uint32_t sends_outstanding_ = 0;
    verify_report verify_;
};

/// The side that answers. One thread at a time.
class latency_passive {
public:
    /// Arms QP qp of ep for the point (as latency_active); for read, fills the region the
    /// active side reads with the pattern. Construct before telling the peer "ready".
    latency_passive(endpoint& ep, std::size_t qp, const point_params& p);

    /// Answers round trips until stop is true (write, send), or just waits for stop (read:
    /// nothing to do). Returns with no work request outstanding. Returns round trips
    /// answered. Throws rdma_error when a completion failed.
    std::uint64_t run(const std::atomic<bool>& stop);

    /// Messages from the active side checked against the pattern (write, send).
    const verify_report& verification() const noexcept { return verify_; }

private:
    endpoint* ep_;
    qp_slot* slot_;
    point_params p_;
    std::uint64_t iter_ = 0;
    std::uint32_t sends_outstanding_ = 0;
    verify_report verify_;
};

}  // namespace meshperf::transport::rdma
