#pragma once
/// What one measured point on one QP needs: its parameters, the verify report, and the
/// counters a bandwidth loop publishes for other threads.
#include "core/run_spec.hpp"
#include "core/units.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace meshperf::transport::rdma {

/// Parameters of one point; both sides must use the same op, size, verify and seed (they
/// come from the run spec both daemons hold).
struct point_params {
    core::rdma_op op = core::rdma_op::write;
    std::uint64_t size = 8;             ///< message bytes, 1..the endpoint's max_message_bytes
    std::uint32_t tx_depth = 0;         ///< send-queue window; 0: the endpoint's tx_depth
    std::uint32_t signal_every = 0;     ///< bandwidth: request a completion every Nth message;
                                        ///< 0: window / 4 (at least 1); at most the window
    bool verify = false;                ///< the receiving side checks the pattern of pattern_seed
    std::uint32_t pattern_seed = 1;     ///< e.g. the point's index in the run
    std::chrono::milliseconds peer_timeout{5000};  ///< no progress this long: the peer is gone
    /// Test hook (the daemon's MESHPERF_TEST_CORRUPT_RDMA): when the point is armed, one byte
    /// of what this side gives the peer is flipped — the send region (WRITE, SEND) and, on a
    /// passive READ side, the region the peer reads — so every message carries it and the
    /// peer's --verify must fail the point. Applied once at arming (detail::prepare_slot and
    /// the passive READ constructors), never in the loops; host memory only. Off in service.
    bool corrupt_sent_for_test = false;
};

/// What --verify found on one side of one QP.
struct verify_report {
    std::uint64_t checked = 0;          ///< messages (or final regions) compared
    std::uint64_t corrupt = 0;          ///< of those, how many differed
    std::uint64_t first_bad_offset = 0; ///< byte offset of the first difference seen
    bool ok() const noexcept { return corrupt == 0; }
};

/// Progress of a bandwidth loop. Written by the loop's thread only; any thread may load()
/// a snapshot at any time (relaxed atomics: each field is exact, the set is consistent to
/// within one completion batch). Timestamps are steady_clock nanoseconds since its epoch.
class bandwidth_counters {
public:
    struct snapshot {
        std::uint64_t bytes = 0;       ///< completed (active WRITE/READ, sender of SEND) or received
        std::uint64_t messages = 0;
        std::int64_t first_ns = 0;     ///< sender: before the first post; receiver: first completion; 0: none yet
        std::int64_t last_ns = 0;      ///< latest completion; 0: none yet
        /// last - first in seconds (0 before two timestamps).
        double seconds() const noexcept {
            return last_ns > first_ns ? core::seconds_from_ns_by_factor(static_cast<double>(last_ns - first_ns)) : 0.0;
        }
    };

    /// Any thread.
    snapshot load() const noexcept {
        snapshot s;
        s.last_ns = last_ns_.load(std::memory_order_acquire);
        s.first_ns = first_ns_.load(std::memory_order_relaxed);
        s.bytes = bytes_.load(std::memory_order_relaxed);
        s.messages = messages_.load(std::memory_order_relaxed);
        return s;
    }

    // Writer side: the loop's thread only.
    void reset() noexcept {
        bytes_.store(0, std::memory_order_relaxed);
        messages_.store(0, std::memory_order_relaxed);
        first_ns_.store(0, std::memory_order_relaxed);
        last_ns_.store(0, std::memory_order_release);
    }
    void start(std::int64_t now_ns) noexcept { first_ns_.store(now_ns, std::memory_order_relaxed); }
    void publish(std::uint64_t messages, std::uint64_t bytes, std::int64_t now_ns) noexcept {
        messages_.store(messages, std::memory_order_relaxed);
        bytes_.store(bytes, std::memory_order_relaxed);
        last_ns_.store(now_ns, std::memory_order_release);
    }

private:
    alignas(64) std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::uint64_t> messages_{0};
    std::atomic<std::int64_t> first_ns_{0};
    std::atomic<std::int64_t> last_ns_{0};
};

/// steady_clock now, in the counters' unit.
inline std::int64_t steady_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace meshperf::transport::rdma
