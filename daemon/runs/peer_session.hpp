#pragma once
/// A peer session this daemon serves, on its own thread: the HTTP layer accepted the upgrade
/// and hands the socket over; the hello says whether the peer initiates a sweep
/// (daemon/sweep/responder.hpp) or makes this daemon a rank of a collective run
/// (daemon/collective/participant.hpp). Here, above both, so neither knows the other.
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"

namespace meshperf::daemon {

/// Serves the session until bye, an error, or silence; never throws. Errors are sent to
/// the initiator as an error frame (when the channel still works) and logged. `lease`: the
/// measurement gate, taken for this session by the HTTP layer; freed when the session ends.
void serve_session(daemon_context& ctx, frame_channel ch, measurement_gate::lease lease);

}  // namespace meshperf::daemon
