#include "daemon/runs/peer_session.hpp"

#include "core/error.hpp"
#include "daemon/collective/participant.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/sweep/responder.hpp"
#include "daemon/transports/registry.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

void serve_session(daemon_context& ctx, frame_channel ch, measurement_gate::lease lease) {
    const std::string who = ch.peer_name();
    try {
        guard_session_socket(ch.fd());
        const auto hello = ch.receive(transport::clock::now() + handshake_timeout);
        if (hello.type != core::frame_type::hello) throw session_error("the session did not start with a hello");
        if (is_collective_hello(hello.body))
            serve_collective(ctx, ch, hello, find_collective_plugin);
        else
            serve_sweep(ctx, ch, hello, find_sweep_plugins);
        log_info("session {}: finished", who);
    } catch (const std::exception& e) {
        log_warn("session {}: {}", who, e.what());
        try {
            ch.send(core::frame_type::error, {{"message", fmt::format("peer {}: {}", ctx.host.address, e.what())}},
                    transport::clock::now() + std::chrono::seconds(1));
        } catch (...) {
        }
    }
    lease.release();
}

}  // namespace meshperf::daemon
