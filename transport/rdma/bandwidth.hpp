#pragma once
/// Bandwidth (and message-rate) points on one QP: a unidirectional stream of messages with
/// a send-queue window and completion moderation.
///
/// Ops: write and read are one-sided: the active side posts and counts completions (an RC
/// completion means the responder acknowledged the data, for READ that it has arrived
/// here); the passive side only waits for stop and, with verify, checks the final region.
/// send: the active side streams SENDs, the passive side counts and checks receives.
/// Protocol as for latency (docs/rdma.md): passive constructs (arms), says "ready", runs;
/// active runs after "ready" until its stop flag or max_messages, then says "done" carrying
/// its message count; the passive side calls expect(count), then sets its stop flag.
/// One QP per runner and per thread: run N QPs with N runners on N threads. Bidirectional
/// tests use separate QPs for each direction (each side active on some, passive on others).
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/point.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace meshperf::transport::rdma {

/// The sending side (write, send) or the reading side (read).
class bandwidth_active {
public:
    /// Arms QP qp of ep: validates p (window, moderation), fills the pattern (verify),
    /// clears the region a READ lands in. Throws core::spec_error, rdma_error.
    bandwidth_active(endpoint& ep, std::size_t qp, const point_params& p);

    /// Streams messages until stop is true or max_messages (0: no limit) have been posted;
    /// on stop it completes the current moderation group (at most signal_every - 1 more
    /// messages), then waits for every posted message to complete. counters() advance at
    /// each completion batch. Call once. Throws rdma_error after the loop when a
    /// completion failed or nothing completed for peer_timeout; the endpoint is then
    /// unusable. For read with verify, the region read is checked at the end.
    void run(const std::atomic<bool>& stop, std::uint64_t max_messages = 0);

    /// Any thread, any time.
    const bandwidth_counters& counters() const noexcept { return counters_; }
    /// Messages posted (= completed once run() has returned): what "done" carries.
    std::uint64_t messages() const noexcept { return counters_.load().messages; }
    /// read with verify: the final region checked.
    const verify_report& verification() const noexcept { return verify_; }
    /// Whether messages of this size go inline (write, send; device permitting).
    bool inline_sends() const noexcept;
    /// The moderation and window actually used.
    const point_params& params() const noexcept { return p_; }

private:
    endpoint* ep_;
    qp_slot* slot_;
    point_params p_;
    bandwidth_counters counters_;
    verify_report verify_;
};

/// The receiving side (send), or the side whose memory is written or read (write, read).
class bandwidth_passive {
public:
    /// Arms QP qp of ep: clears the receive region, posts receives (send), fills the region
    /// to be read (read). Construct before telling the peer "ready".
    bandwidth_passive(endpoint& ep, std::size_t qp, const point_params& p);

    /// send: counts received messages (counters()), checking each with verify, until stop is
    /// true and then until expect()'s count has arrived (or, without expect(), until the CQ
    /// stays empty for 1 ms); messages that do not arrive within peer_timeout after stop
    /// throw rdma_error. write/read: waits for stop; with verify (write) checks the region,
    /// unless expect(0) said no message landed (a QP that failed at once on a failed rail).
    void run(const std::atomic<bool>& stop);

    /// The active side's message count from its "done" notification. Any thread; call
    /// before setting the stop flag.
    void expect(std::uint64_t messages) noexcept { expected_.store(messages, std::memory_order_release); }

    /// send: received messages and bytes. write/read: stays zero (the active side counts).
    const bandwidth_counters& counters() const noexcept { return counters_; }
    const verify_report& verification() const noexcept { return verify_; }

private:
    static constexpr std::uint64_t unknown = std::numeric_limits<std::uint64_t>::max();
    endpoint* ep_;
    qp_slot* slot_;
    point_params p_;
    bandwidth_counters counters_;
    verify_report verify_;
    std::atomic<std::uint64_t> expected_{unknown};
};

}  // namespace meshperf::transport::rdma
