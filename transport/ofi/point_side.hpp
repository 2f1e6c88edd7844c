#pragma once
/// One daemon's side of a libfabric point: a loop per endpoint (active or passive), one
/// thread per loop, and the counters the session snapshots. The session supplies the order,
/// as for RDMA: passive loops start before the peer's active ones (ready / go), and the
/// active side's message counts reach the passive side before it stops (stop / done).
#include "core/latency_runner.hpp"
#include "core/run_spec.hpp"
#include "transport/ofi/endpoint.hpp"
#include "transport/ofi/loops.hpp"
#include "transport/stream_thread.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace meshperf::transport::ofi {

enum class loop_role : std::uint8_t { active, passive };

/// The initiator's roles for a test, one per endpoint: latency is endpoint 0 active;
/// bandwidth `streams` active (passive with reverse); bidir `streams` active then `streams`
/// passive. The peer's are the mirror.
std::vector<loop_role> initiator_roles(core::test_kind, std::uint32_t streams, bool reverse);
std::vector<loop_role> peer_roles(core::test_kind, std::uint32_t streams, bool reverse);
/// Endpoints a run needs: the most any of its tests uses.
std::uint32_t endpoints_for(const core::run_spec&);

class point_side {
public:
    /// Arms a loop on endpoint k for each role k (patterns, posted receives). Throws
    /// ofi_error or core::spec_error.
    point_side(std::vector<endpoint*> eps, const core::run_spec& spec, core::test_kind test, std::uint64_t size,
               std::vector<loop_role> roles, const point_params& params);
    ~point_side();
    point_side(const point_side&) = delete;
    point_side& operator=(const point_side&) = delete;

    /// CPUs the loop threads are pinned to, round-robin (empty: the scheduler's choice).
    void pin_to(std::vector<int> cpus) { cpus_ = std::move(cpus); }
    void start_passive();
    void start_active();
    /// True once every active loop has ended (a latency point ends by itself).
    bool active_finished() const;
    /// Stops the active loops and waits for them.
    void stop_active();
    /// Messages each active loop sent, in role order (what the passive side expects).
    std::vector<std::uint64_t> active_messages() const;
    /// Gives each passive loop the peer's count (role order), stops and joins them.
    void finish_passive(const std::vector<std::uint64_t>& peer_active_messages);
    /// Stops everything at once and joins. Never throws.
    void abort() noexcept;

    /// Bytes received so far by each counting (receiving bandwidth) loop of this side.
    std::vector<std::uint64_t> counted_bytes() const;
    std::size_t counting_loops() const;
    /// The first error of a loop that has ended.
    std::string error() const;
    // After everything is joined:
    bool verify_failed() const;
    /// Bytes compared with the pattern here and found equal.
    std::uint64_t verified_bytes() const;
    /// The first corruption seen here, in words ("message 3 of endpoint 0 differs from byte 7"); empty when none.
    std::string corruption() const;
    double cpu_seconds() const;
    double wall_seconds() const;
    std::vector<thread_cpu_record> thread_cpus() const;
    const core::latency_outcome& latency() const { return latency_; }

private:
    struct loop;
    void run(loop& l, int cpu);
    void start(loop_role role);
    void join(loop_role role);

    core::run_spec spec_;
    core::test_kind test_;
    std::uint64_t size_;
    std::vector<std::unique_ptr<loop>> loops_;
    std::vector<int> cpus_;
    std::atomic<bool> stop_active_{false}, stop_passive_{false};
    core::latency_outcome latency_;
    std::vector<double> samples_;
    std::int64_t start_ns_ = 0;
    std::atomic<std::int64_t> last_end_ns_{0};
};

}  // namespace meshperf::transport::ofi
