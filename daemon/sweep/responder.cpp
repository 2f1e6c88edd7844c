#include "daemon/sweep/responder.hpp"

#include "core/error.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/sweep/point_harness.hpp"
#include "daemon/sweep/rail_addresses.hpp"
#include "daemon/sweep/rdma_points.hpp"
#include "daemon/session/run_placement.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/sweep/tcp_points.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;

}  // namespace

void serve_sweep(daemon_context& ctx, frame_channel& ch, const session_message& hello) {
    core::run_spec spec;
    try {
        spec = core::run_spec_from_json(hello.body.at("spec"), ctx.limits);
        check_responder_rails(spec);  // the token's streams come to this host's own addresses only
    } catch (const std::exception& e) {
        throw session_error(fmt::format("this peer refuses the run spec: {}", e.what()));
    }
    run_placement placement;
    try {
        placement = peer_placement(spec, read_host_cpu_facts(), transport::local_ip(ch.fd()), hello.body);
    } catch (const std::exception& e) {
        throw session_error(fmt::format("this peer refuses the run spec: {}", e.what()));
    }
    const auto byte_cap = agreed_byte_cap(ctx.limits, hello.body);
    std::unique_ptr<responder_transport> transport;
    try {
        for (const auto& memory : core::side_memories(spec, false)) require_memory_domain(memory, "peer");
        transport = spec.transport == core::transport_kind::rdma
                        ? make_rdma_responder_transport(spec, byte_cap, placement.cpus, ctx.sweep_hooks)
                        : make_tcp_responder_transport(ctx, ch, spec, byte_cap, placement.cpus);
    } catch (const std::exception& e) {
        throw session_error(e.what());
    }
    ch.send(core::frame_type::hello_ok,
            {{"protocol", session_protocol_version()},
             {"host", core::to_json(ctx.host)},
             {"limits", {{"max_bytes_per_point", ctx.limits.max_bytes_per_point}}},
             {"memory_notes", transport->hello_notes()},
             {"placement", hello_placement(placement)}},
            clock::now() + handshake_timeout);
    log_info("session {}: run {} accepted", ch.peer_name(), hello.body.value("run_id", "?"));
    transport->open(ch);
    // Between points the initiator sends the next point_begin at once: silence means it froze
    // or vanished (its kernel may still acknowledge). Only point_begin and bye count as
    // progress; a heartbeat or a stray point_stop proves liveness, never extends the idle limit.
    const auto silence = initiator_silence(ctx.limits);
    auto progress_deadline = clock::now() + idle_session_timeout;
    auto last_heard = clock::now();
    while (true) {
        const auto silent_at = last_heard + silence;
        const auto m = ch.try_receive(std::min(progress_deadline, silent_at));
        if (!m) {
            if (clock::now() >= progress_deadline)
                throw session_error(fmt::format("the initiator {} started no point for {} s: this peer ends the session",
                                                ch.peer_name(), idle_session_timeout.count()));
            throw session_error(initiator_silence_message(ch.peer_name(), ctx.limits));
        }
        last_heard = clock::now();
        if (m->type == core::frame_type::bye) return;
        if (m->type == core::frame_type::point_begin) {
            const auto key = parse_point_begin(spec, m->body);
            const auto ops = transport->point(key, m->body);
            run_responder_point(ch, spec, ctx.limits, placement, key, *ops, ctx.sysfs_root);
            progress_deadline = clock::now() + idle_session_timeout;
            last_heard = clock::now();
        } else if (m->type != core::frame_type::point_stop && m->type != core::frame_type::heartbeat) {
            // A stop or a heartbeat that crossed a point's natural end is fine.
            throw session_error(fmt::format("unexpected {} between points",
                                            core::frame_type_name(static_cast<std::uint16_t>(m->type))));
        }
    }
}

}  // namespace meshperf::daemon
