#pragma once
/// The peer side of a run: serves one peer session on its own thread, measuring each point
/// the initiator asks for through the point harness and the run's transport.
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"

namespace meshperf::daemon {

/// Serves the session until bye, an error, or silence; never throws. Errors are sent to
/// the initiator as an error frame (when the channel still works) and logged. `lease`: the
/// measurement gate, taken for this session by the HTTP layer; freed when the session ends.
void serve_session(daemon_context& ctx, frame_channel ch, measurement_gate::lease lease);

}  // namespace meshperf::daemon
