#pragma once
/// One daemon's side of an RDMA point: a runner per QP (active or passive), one thread per
/// runner, and the counters the controller snapshots. The session supplies the ordering:
/// passive runners are armed before the peer's active ones start (ready / go), and an active
/// side's message counts reach the passive side before it stops (docs/architecture.md).
#include "core/run_spec.hpp"
#include "transport/rdma/bandwidth.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/latency.hpp"
#include "core/latency_runner.hpp"
#include "transport/stream_thread.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace meshperf::transport::rdma {

enum class qp_role : std::uint8_t { active, passive };

/// The initiator's QP roles for a test: latency is QP 0 active; bandwidth is `streams` QPs
/// active (passive with reverse); bidir is `streams` active then `streams` passive.
std::vector<qp_role> initiator_qp_roles(core::test_kind, std::uint32_t streams, bool reverse);
qp_role mirror(qp_role);
/// QPs a run needs: the most any of its tests uses.
std::uint32_t qps_for(const core::run_spec&);
/// Whether the active side counts the bytes (write, read: its completions are the figures)
/// or the passive side (send: the receiver counts).
bool active_counts(core::rdma_op);
/// Whether the side counting bytes is the one the data flows to (send, read) rather than
/// from (write).
bool counting_side_receives(core::rdma_op);

class point_side {
public:
    /// Arms every runner (buffers, patterns, posted receives). `corrupt_sent_for_test`: the
    /// test hook of point_params (one flipped byte in what every runner gives the peer), set
    /// only by a daemon started with MESHPERF_TEST_CORRUPT_RDMA=1. Throws rdma_error or
    /// core::spec_error.
    point_side(endpoint& ep, const core::run_spec& spec, core::test_kind test, std::uint64_t size,
               std::vector<qp_role> roles, std::uint32_t seed, bool corrupt_sent_for_test = false);
    ~point_side();
    point_side(const point_side&) = delete;
    point_side& operator=(const point_side&) = delete;

    /// CPUs the runner threads are pinned to, round-robin (empty: left to the scheduler).
    /// Call before starting; the session passes the CPUs chosen once for the run.
    void pin_to(std::vector<int> cpus) { cpus_ = std::move(cpus); }
    /// Starts the passive runners' threads (call before telling the peer to start).
    void start_passive();
    /// Starts the active runners' threads (after the peer's passive runners are armed).
    void start_active();
    /// True once every active runner has ended (a latency point ends by itself).
    bool active_finished() const;
    /// Stops the active runners and waits for them.
    void stop_active();
    /// Messages each active runner posted, in role order (what the passive side expects).
    std::vector<std::uint64_t> active_messages() const;
    /// Gives each passive runner the peer's count (in role order), stops and joins them.
    void finish_passive(const std::vector<std::uint64_t>& peer_active_messages);
    /// Stops everything at once (errors, cancellation) and joins.
    void abort();

    /// Bytes counted so far by each counting runner of this side.
    std::vector<std::uint64_t> counted_bytes() const;
    std::size_t counting_runners() const;

    /// The first error of a runner that has ended (safe while others run); complete once
    /// everything is joined.
    std::string error() const;
    // After everything is joined:
    bool verify_failed() const;
    /// Bytes compared with the pattern here and found equal: checked messages (or final
    /// regions) times the message size; 0 without --verify or when this side checks nothing.
    std::uint64_t verified_bytes() const;
    double cpu_seconds() const;
    double wall_seconds() const;
    /// Where each runner's thread ran, in role order (runners never started are left out).
    std::vector<thread_cpu_record> thread_cpus() const;
    const core::latency_outcome& latency() const { return latency_; }

private:
    struct runner;
    void run(runner& r, int cpu);
    void join(bool active);

    endpoint& ep_;
    core::run_spec spec_;
    core::test_kind test_;
    std::uint64_t size_;
    std::vector<std::unique_ptr<runner>> runners_;
    std::vector<int> cpus_;
    std::atomic<bool> stop_active_{false}, stop_passive_{false};
    core::latency_outcome latency_;
    std::vector<double> samples_;
    std::int64_t start_ns_ = 0;
    std::atomic<std::int64_t> last_end_ns_{0};
};

}  // namespace meshperf::transport::rdma
