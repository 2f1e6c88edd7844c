#pragma once
/// A rank of a collective run that another daemon coordinates: the session after its hello
/// (frames in daemon/collective/wire.hpp), the data connections, every size the
/// coordinator announces measured with daemon/collective/engine.
#include "daemon/collective/collective_plugin.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"

namespace meshperf::daemon {

/// True when a hello asks for a collective rank rather than a pairwise run.
bool is_collective_hello(const nlohmann::json& hello_body);

/// Serves the collective run that `hello` starts, until bye. Throws session_error (the caller
/// sends it to the coordinator) for a plan this daemon refuses or a broken session; a fault
/// of the data path is sent to the coordinator here, with the rank it blames, and ends the
/// session quietly. Every socket and buffer of the run is gone when it returns. The spec's
/// transport opens its links through its plug-in from `find_plugin`.
void serve_collective(daemon_context& ctx, frame_channel& ch, const session_message& hello,
                      const collective_plugin_lookup& find_plugin);

}  // namespace meshperf::daemon
