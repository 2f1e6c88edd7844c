#pragma once
/// The peer side of a run: serves one peer session on its own thread, measuring each point
/// the initiator asks for. The gate is already held for this session by the HTTP layer and
/// is released when the session ends.
#include "daemon/daemon_context.hpp"
#include "daemon/frame_channel.hpp"

namespace meshperf::daemon {

/// Serves the session until bye, an error, or silence; never throws. Errors are sent to
/// the initiator as an error frame (when the channel still works) and logged.
void serve_session(daemon_context& ctx, frame_channel ch);

}  // namespace meshperf::daemon
