#pragma once
/// The coordinator of a collective run: the daemon that
/// took `POST /v1/collectives`. It opens a peer session with every other rank and hands it the
/// plan (frames in daemon/collective/wire.hpp), has every rank connect its data
/// connections, then measures every size with them (daemon/collective/size_loop.hpp: its own
/// rank beside the others, each size assembled from every rank's timing). A failure names the
/// rank it is put on and the step; the sizes done before it are kept.
#include "core/collective/result.hpp"
#include "daemon/collective/collective_plugin.hpp"
#include "daemon/collective/run_error.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/session/session_protocol.hpp"

#include <atomic>

namespace meshperf::daemon {

/// Measures every op and size of result.spec, appending points to result.points and emitting
/// "started" and "point" events. Throws collective_run_error when the run fails, or
/// run_cancelled. Holds this daemon's measurement gate, and through the sessions every
/// other rank's, for the whole run. The spec's transport opens its links through its plug-in
/// from `find_plugin`.
void execute_collective(daemon_context& ctx, core::collective_result& result, const event_sink& emit,
                        const std::atomic<bool>& cancel, const collective_plugin_lookup& find_plugin);

}  // namespace meshperf::daemon
