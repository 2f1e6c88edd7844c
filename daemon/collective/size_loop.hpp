#pragma once
/// The coordinator's loop over the sizes of a collective run, once every rank's session and
/// the mesh are up (daemon/collective/coordinator.cpp sets them up): for each op and size,
/// point_begin to every rank, this rank's own share beside theirs, every rank's report; then
/// the point assembled from every rank's timing (core::assemble_collective_point), or the
/// failure put on one rank.
#include "core/collective/result.hpp"
#include "daemon/collective/engine.hpp"
#include "daemon/collective/run_error.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/session_protocol.hpp"

#include <atomic>
#include <optional>
#include <vector>

namespace meshperf::daemon {

/// What the loop works with, set up by the coordinator.
struct size_loop_setup {
    const core::run_limits& limits;                       ///< this daemon's (max_run_s, max_iterations, max_duration_s)
    unsigned me = 0;                                      ///< the coordinator's rank
    std::vector<std::optional<frame_channel>>& sessions;  ///< every other rank's (none at `me`); a lost one is reset
    collective_mesh& mesh;                                ///< this rank's data connections; closed on a failure
    const size_run_options& options;                      ///< how this rank iterates every size
};

/// Measures every op and size of result.spec in order, appending each point to result.points
/// (and its warnings to result.warnings) and emitting a "point" event. Throws
/// collective_run_error naming the rank a failure is put on, the size and how many sizes were
/// measured; past limits.max_run_s; or run_cancelled.
void measure_all_sizes(const size_loop_setup& setup, core::collective_result& result, const event_sink& emit,
                       const std::atomic<bool>& cancel);

}  // namespace meshperf::daemon
