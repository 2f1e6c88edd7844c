#pragma once
/// Turns what the initiator learned during a point (latency outcome, flow trackers or
/// fixed-count windows, CPU times) into a checked point_result with its warnings. Shared by
/// every transport's point driver.
#include "core/flow_tracker.hpp"
#include "core/latency_runner.hpp"
#include "core/rail_figures.hpp"
#include "core/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// A flow measured over time by a tracker.
struct tracked_flow {
    std::string direction;  ///< "initiator->peer" or "peer->initiator"
    const core::flow_tracker* tracker;
};

struct point_inputs {
    const core::run_spec& spec;
    core::test_kind test;
    std::uint64_t size;
    const core::latency_outcome* latency = nullptr;  ///< latency points
    std::vector<core::flow_figures> fixed_flows;     ///< fixed-count bandwidth points
    std::vector<tracked_flow> tracked_flows;         ///< adaptive / duration bandwidth points
    double local_cpu_s = 0, local_wall_s = 0;
    double peer_cpu_s = 0, peer_wall_s = 0;
    bool sender_is_local = true;                     ///< whose CPU bounds a unidirectional point
    std::uint64_t byte_cap_reached = 0;              ///< non-zero: the point stopped at this byte limit (per direction)
    std::optional<core::tcp_point_counters> tcp_counters;  ///< TCP bandwidth points: the sending streams' counters
    /// Rails whose streams failed in this point (spec.rails; the tracked flows count none of
    /// their bytes), and rails of `run_rails` the point left out, failed in an earlier one.
    std::vector<core::rail_failure> failed_rails, dropped_rails;
    const std::vector<core::rail_pair>* run_rails = nullptr;  ///< the run's rails (null: spec.rails)
    /// Bytes checked against the pattern here and at the peer (its point_done's
    /// verified_bytes): the point says it was verified only when some end checked data.
    std::uint64_t verified_here = 0, verified_at_peer = 0;
};

/// Builds the point and runs core::check_sane on it (throws core::insane_figure).
core::point_result assemble_point(const point_inputs& in);

/// True when every tracked flow has met the precision target: at least
/// core::min_blocks_for_target intervals, and the wider of the per-interval and the
/// between-block interval within the target (core::target_met).
bool flows_precise_enough(const std::vector<tracked_flow>& flows, double precision);

/// Whether a point stops now: its time cap is reached and every flow has moved some byte,
/// or core::first_bytes_grace_s more have passed (a flow whose streams are still starting).
/// A flow that moved any byte is never waited for, however slow: one whose window holds no
/// bytes at the stop is reported over the whole point, warm-up included, and said so
/// (assemble_point). Within the announced bound (core::point_overrun_bound_s).
bool may_stop_at_cap(const std::vector<tracked_flow>& flows, double elapsed_s, double cap_s);

}  // namespace meshperf::daemon
