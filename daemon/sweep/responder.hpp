#pragma once
/// The peer side of a sweep: serves a peer session whose hello asks for a pairwise run,
/// measuring each point the initiator asks for through the point harness and the run's
/// transport. The session thread (daemon/runs/peer_session.hpp) reads the hello and calls it.
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/sweep/point_transport.hpp"

namespace meshperf::daemon {

/// Serves the sweep that `hello` starts: the spec checked against this daemon's limits,
/// hello_ok, then every point until bye. Throws session_error (the caller sends it to the
/// initiator) for a spec this daemon refuses (a transport `find_plugins` does not have
/// included), a broken session, or silence.
void serve_sweep(daemon_context& ctx, frame_channel& ch, const session_message& hello, const sweep_plugin_lookup& find_plugins);

}  // namespace meshperf::daemon
