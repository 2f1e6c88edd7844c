#pragma once
/// The initiator side of a run: opens the peer session, measures every point with the
/// peer, and returns the result. Runs on the executor thread; blocking I/O with deadlines.
#include "core/result.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/sweep/point_harness.hpp"
#include "daemon/sweep/point_transport.hpp"

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

/// Measures one point.
using point_measurer = std::function<core::point_result(const point_key&)>;

/// Runs `measure` for every (test, size) of run.spec in order, appending each point to
/// run.points and emitting a "point" event. A failure is rethrown as a session_error that
/// names the point ("point 4/6 (<path>bandwidth 64 KiB) against peer ...: ..."); `path` is
/// empty for TCP, e.g. "rdma write " for RDMA. Throws run_cancelled when cancel is set.
/// A latency test of core::drift_min_sizes sizes or more also measures its first size again
/// every core::drift_reference_every points (core/sweep_drift.hpp): those readings go to
/// run.drift, not run.points, and widen the precision of points narrower than the drift.
void measure_all_points(core::run_result& run, std::string_view path, const event_sink& emit,
                        const std::atomic<bool>& cancel, const point_measurer& measure);

/// Measures every point of `run.spec` against its peer and fills run.peer, run.points and
/// run.warnings. Throws session_error / std::system_error / core::insane_figure with a
/// message naming the peer and the point; `cancel` ends the run between (or inside) points
/// with run_cancelled. The transport's plug-ins come from `find_plugins`, asked once the
/// peer has accepted the session.
void execute_run(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel,
                 const sweep_plugin_lookup& find_plugins);

}  // namespace meshperf::daemon
