#include "daemon/responder.hpp"

#include "core/error.hpp"
#include "daemon/gpu_support.hpp"
#include "daemon/log.hpp"
#include "daemon/rdma_session.hpp"
#include "daemon/session_protocol.hpp"
#include "transport/tcp/point_side.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;
namespace tcp = transport::tcp;

void serve_point(daemon_context& ctx, frame_channel& ch, const core::run_spec& spec, const json& begin) {
    const auto test = core::parse_test_kind(begin.at("test").get<std::string>());
    const auto size = begin.at("size").get<std::uint64_t>();
    const auto token = begin.at("token").get<std::string>();
    if (std::find(spec.sizes.begin(), spec.sizes.end(), size) == spec.sizes.end() ||
        std::find(spec.tests.begin(), spec.tests.end(), test) == spec.tests.end())
        throw session_error("the initiator asked for a point outside the agreed run spec");

    std::vector<tcp::stream_role> roles;
    for (auto r : tcp::initiator_roles(test, spec.streams, spec.reverse)) roles.push_back(tcp::mirror(r));
    ctx.streams.open(token, roles.size());
    ch.send(core::frame_type::point_ready, json::object(), clock::now() + handshake_timeout);
    std::vector<transport::socket_fd> fds;
    try {
        fds = ctx.streams.wait(token, clock::now() + streams_timeout);
    } catch (const std::runtime_error& e) {
        throw session_error(fmt::format("data streams did not arrive: {}", e.what()));
    }
    tcp::point_side side(spec, test, size, std::move(fds), roles);
    // Start only once the initiator holds every stream, so no data races its upgrade answer.
    const auto go = ch.receive(clock::now() + streams_timeout);
    if (go.type != core::frame_type::point_go)
        throw session_error(fmt::format("expected point_go, got {}", core::frame_type_name(static_cast<std::uint16_t>(go.type))));
    const auto t0 = clock::now();
    side.start();
    const bool reports = side.receivers() > 0 && !spec.iterations;
    try {
        while (!side.finished()) {
            if (reports) {
                const double t = std::chrono::duration<double>(clock::now() - t0).count();
                ch.send(core::frame_type::progress, {{"t_s", t}, {"bytes", side.received_bytes()}}, clock::now() + handshake_timeout);
            }
            if (auto m = ch.try_receive(clock::now() + progress_tick)) {
                if (m->type == core::frame_type::point_stop) side.stop();
                else throw session_error(fmt::format("unexpected {} during a point", core::frame_type_name(static_cast<std::uint16_t>(m->type))));
            }
        }
    } catch (...) {
        side.stop();
        side.join();
        throw;
    }
    side.join();
    ch.send(core::frame_type::point_done,
            {{"cpu_s", side.cpu_seconds()},
             {"wall_s", side.wall_seconds()},
             {"error", side.error()},
             {"verify_failed", side.verify_failed()},
             {"measured_bytes", side.measured_bytes()},
             {"begin_ns", side.begin_ns()},
             {"end_ns", side.end_ns()}},
            clock::now() + handshake_timeout);
}

}  // namespace

void serve_session(daemon_context& ctx, frame_channel ch) {
    const std::string who = ch.peer_name();
    try {
        const auto hello = ch.receive(clock::now() + handshake_timeout);
        if (hello.type != core::frame_type::hello) throw session_error("the session did not start with a hello");
        core::run_spec spec;
        try {
            spec = core::run_spec_from_json(hello.body.at("spec"), ctx.limits);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("this peer refuses the run spec: {}", e.what()));
        }
        try {
            require_memory_domain(spec.remote_memory, "peer");
        } catch (const std::exception& e) {
            throw session_error(e.what());
        }
        ch.send(core::frame_type::hello_ok, {{"protocol", session_protocol_version()}, {"host", core::to_json(ctx.host)}},
                clock::now() + handshake_timeout);
        log_info("session {}: run {} accepted", who, hello.body.value("run_id", "?"));
        if (spec.transport == core::transport_kind::rdma) {
            serve_rdma_points(ctx, ch, spec);
            log_info("session {}: finished", who);
            ctx.gate.release();
            return;
        }
        while (true) {
            const auto m = ch.receive(clock::now() + idle_session_timeout);
            if (m.type == core::frame_type::bye) break;
            if (m.type == core::frame_type::point_begin) serve_point(ctx, ch, spec, m.body);
            else if (m.type == core::frame_type::point_stop) continue;  // a stop that crossed a natural end
            else throw session_error(fmt::format("unexpected {} between points", core::frame_type_name(static_cast<std::uint16_t>(m.type))));
        }
        log_info("session {}: finished", who);
    } catch (const std::exception& e) {
        log_warn("session {}: {}", who, e.what());
        try {
            ch.send(core::frame_type::error, {{"message", fmt::format("peer {}: {}", ctx.host.address, e.what())}},
                    clock::now() + std::chrono::seconds(1));
        } catch (...) {
        }
    }
    ctx.gate.release();
}

}  // namespace meshperf::daemon
