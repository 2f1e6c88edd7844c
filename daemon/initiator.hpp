#pragma once
/// The initiator side of a run: opens the peer session, measures every point with the
/// peer, and returns the result. Runs on the executor thread; blocking I/O with deadlines.
#include "core/result.hpp"
#include "daemon/daemon_context.hpp"

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

/// Receives progress events ({"event": "point", ...}) as points complete.
using event_sink = std::function<void(const nlohmann::json&)>;

/// Measures every point of `run.spec` against its peer and fills run.peer, run.points and
/// run.warnings. Throws session_error / std::system_error / core::insane_figure with a
/// message naming the peer and the point; `cancel` ends the run between (or inside) points
/// with std::runtime_error("cancelled").
void execute_run(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel);

}  // namespace meshperf::daemon
