// RDMA points over the peer session (docs/architecture.md, docs/rdma.md): endpoint
// descriptions travel as `endpoint` frames; per point, passive runners are armed and
// started before the other side's active runners start (point_ready / point_go), and each
// side's active message counts reach the other before its passive runners stop
// (point_stop / point_done).
#include "daemon/rdma_session.hpp"

#include "core/json_fields.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/sizes.hpp"
#include "daemon/gpu_support.hpp"
#include "daemon/log.hpp"
#include "daemon/point_figures.hpp"
#include "daemon/session_protocol.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/inventory.hpp"
#include "transport/rdma/point_side.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

using transport::clock;
using nlohmann::json;
namespace rdma = transport::rdma;

namespace {

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

// `memory`: this side's memory domain ("host", "cuda:N").
std::unique_ptr<rdma::endpoint> open_endpoint(const core::run_spec& spec, const frame_channel& ch, const std::string& memory) {
    rdma::endpoint_options o;
    o.gpu_memory = rdma_device_memory(memory);
    o.device = spec.rdma_device;
    o.port = static_cast<std::uint8_t>(spec.rdma_port);
    o.gid_index = spec.gid_index;
    o.local_ip = transport::local_ip(ch.fd());
    o.qps = rdma::qps_for(spec);
    o.max_message_bytes = spec.sizes.back();
    o.tx_depth = spec.tx_depth;
    return std::make_unique<rdma::endpoint>(o);
}

std::vector<rdma::qp_role> peer_roles(const core::run_spec& spec, core::test_kind test) {
    auto roles = rdma::initiator_qp_roles(test, spec.streams, spec.reverse);
    for (auto& r : roles) r = rdma::mirror(r);
    return roles;
}

std::size_t counting(const std::vector<rdma::qp_role>& roles, core::rdma_op op) {
    std::size_t n = 0;
    for (auto r : roles)
        if ((r == rdma::qp_role::active) == rdma::active_counts(op)) ++n;
    return n;
}

// Sentences for the result about one side's GPU memory: how it was registered, and where
// the GPU sits relative to the NIC. Empty for host memory.
std::vector<std::string> gpu_memory_notes(const rdma::endpoint& ep, const std::string& memory, const std::string& side) {
    if (ep.gpu_registration().empty()) return {};
    std::vector<std::string> notes{fmt::format("{} memory {}: GPUDirect RDMA, registered with {} through {}", side, memory,
                                               ep.where(), ep.gpu_registration())};
    for (const auto& n : ep.slot(0).registration->notes) notes.push_back(fmt::format("{}: {}", side, n));
    for (auto& n : memory_notes(memory, side, ep.local_info().device, core::transport_kind::rdma)) notes.push_back(std::move(n));
    return notes;
}

// GPU memory's limits (no --verify, no WRITE latency) are checked by core::validate.
void check_supported(const core::run_spec& spec) {
    for (auto t : spec.tests)
        if (t != core::test_kind::latency && spec.iterations)
            throw core::spec_error("--iterations is not supported for RDMA bandwidth and bidir points: use --duration or the adaptive default");
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
    std::uint64_t s = 0;
    for (auto x : v) s += x;
    return s;
}

core::point_result measure_point(daemon_context&, frame_channel& ch, rdma::endpoint& ep, const core::run_spec& spec,
                                 core::test_kind test, std::uint64_t size, std::size_t index, std::uint64_t byte_cap,
                                 const run_placement& placement, const std::atomic<bool>& cancel) {
    const auto roles = rdma::initiator_qp_roles(test, spec.streams, spec.reverse);
    rdma::point_side side(ep, spec, test, size, roles, static_cast<std::uint32_t>(index));
    side.pin_to(placement.cpus);
    ch.send(core::frame_type::point_begin, {{"index", index}, {"test", core::to_string(test)}, {"size", size}},
            clock::now() + handshake_timeout);
    side.start_passive();
    json peer_done;
    try {
        const auto ready = ch.receive(clock::now() + handshake_timeout);
        if (ready.type != core::frame_type::point_ready) throw session_error("expected point_ready");
        side.start_active();
        ch.send(core::frame_type::point_go, json::object(), clock::now() + handshake_timeout);
        const auto t0 = clock::now();

        // Flows: bytes counted here, and bytes counted at the peer (its progress frames).
        const bool counted_here_is_inbound = rdma::counting_side_receives(spec.op);
        const std::size_t local_n = side.counting_runners(), remote_n = counting(peer_roles(spec, test), spec.op);
        core::flow_tracker local(local_n, spec.warmup_s), remote(remote_n, spec.warmup_s);
        std::vector<tracked_flow> flows;
        if (remote_n) flows.push_back({counted_here_is_inbound ? "initiator->peer" : "peer->initiator", &remote});
        if (local_n) flows.push_back({counted_here_is_inbound ? "peer->initiator" : "initiator->peer", &local});

        const double cap = spec.warmup_s + spec.duration_s.value_or(spec.max_point_s);
        std::uint64_t remote_bytes = 0;
        bool byte_cap_reached = false;
        while (!cancel.load()) {
            const auto tick = clock::now() + progress_tick;
            while (auto m = ch.try_receive(tick)) {
                if (m->type != core::frame_type::progress) throw session_error("unexpected frame during a point");
                const auto bytes = core::json_unsigned_list(m->body.at("bytes"), "bytes");
                remote.add(m->body.at("t_s").get<double>(), bytes);
                remote_bytes = sum(bytes);
            }
            const auto local_bytes = side.counted_bytes();
            if (local_n) local.add(seconds(clock::now() - t0), local_bytes);
            if (test == core::test_kind::latency) {
                if (side.active_finished()) break;
                continue;
            }
            // The byte limit, checked every tick: a flow may pass it by one tick's worth.
            if (byte_cap && (sum(local_bytes) >= byte_cap || remote_bytes >= byte_cap)) {
                byte_cap_reached = true;
                break;
            }
            const double elapsed = seconds(clock::now() - t0);
            if (may_stop_at_cap(flows, elapsed, cap) || (spec.adaptive() && flows_precise_enough(flows, spec.precision))) break;
        }
        side.stop_active();
        ch.send(core::frame_type::point_stop, {{"messages", side.active_messages()}}, clock::now() + handshake_timeout);
        const auto done_deadline = clock::now() + point_done_timeout;
        while (peer_done.is_null()) {
            auto m = ch.receive(done_deadline);
            if (m.type == core::frame_type::point_done) peer_done = m.body;
        }
        side.finish_passive(peer_done.value("active_messages", std::vector<std::uint64_t>{}));
        if (cancel.load()) throw run_cancelled();
        if (side.verify_failed() || peer_done.value("verify_failed", false))
            throw session_error("data verification failed: received bytes did not match the pattern (data corrupted)");
        if (const auto e = side.error(); !e.empty()) throw session_error(fmt::format("RDMA failed here: {}", e));
        if (const auto e = peer_done.value("error", ""); !e.empty()) throw session_error(fmt::format("RDMA failed at the peer: {}", e));

        point_inputs in{spec, test, size};
        in.latency = &side.latency();
        in.tracked_flows = flows;
        in.local_cpu_s = side.cpu_seconds();
        in.local_wall_s = side.wall_seconds();
        in.peer_cpu_s = peer_done.value("cpu_s", 0.0);
        in.peer_wall_s = peer_done.value("wall_s", 0.0);
        in.sender_is_local = !spec.reverse;
        if (byte_cap_reached) in.byte_cap_reached = byte_cap;
        auto point = assemble_point(in);
        point.placement = point_placement_at_initiator(placement, side.thread_cpus(), peer_done);
        return point;
    } catch (...) {
        side.abort();
        throw;
    }
}

void serve_point(frame_channel& ch, rdma::endpoint& ep, const core::run_spec& spec, const json& begin, std::uint64_t byte_cap,
                 const run_placement& placement) {
    const auto test = core::parse_test_kind(begin.at("test").get<std::string>());
    const auto size = core::json_unsigned(begin.at("size"), "size");
    const auto index = static_cast<std::uint32_t>(core::json_unsigned(begin.at("index"), "index", UINT32_MAX));
    if (std::find(spec.sizes.begin(), spec.sizes.end(), size) == spec.sizes.end())
        throw session_error("the initiator asked for a size outside the agreed run spec");
    rdma::point_side side(ep, spec, test, size, peer_roles(spec, test), index);
    side.pin_to(placement.cpus);
    try {
        side.start_passive();
        ch.send(core::frame_type::point_ready, json::object(), clock::now() + handshake_timeout);
        const auto go = ch.receive(clock::now() + streams_timeout);
        if (go.type != core::frame_type::point_go) throw session_error("expected point_go");
        side.start_active();
        const auto t0 = clock::now();
        const bool reports = side.counting_runners() > 0;
        const auto limit = clock::now() + std::chrono::seconds(static_cast<long>(spec.warmup_s + spec.max_point_s +
                                                                                 spec.duration_s.value_or(0) + cap_grace_s + 60));
        json stop;
        bool active_stopped = false;
        while (stop.is_null()) {
            if (clock::now() > limit) throw session_error("the initiator never ended the point");
            const auto counted = side.counted_bytes();
            // Our own active queue pairs stop at the byte limit, whatever the initiator does.
            if (byte_cap && !active_stopped && test != core::test_kind::latency && sum(counted) >= byte_cap) {
                side.stop_active();
                active_stopped = true;
            }
            if (reports)
                ch.send(core::frame_type::progress, {{"t_s", seconds(clock::now() - t0)}, {"bytes", counted}},
                        clock::now() + handshake_timeout);
            if (auto m = ch.try_receive(clock::now() + progress_tick)) {
                if (m->type != core::frame_type::point_stop) throw session_error("unexpected frame during a point");
                stop = m->body;
            }
        }
        side.stop_active();
        side.finish_passive(stop.value("messages", std::vector<std::uint64_t>{}));
        ch.send(core::frame_type::point_done,
                {{"active_messages", side.active_messages()},
                 {"cpu_s", side.cpu_seconds()},
                 {"wall_s", side.wall_seconds()},
                 {"error", side.error()},
                 {"verify_failed", side.verify_failed()},
                 {"placement", core::to_json(observed_placement(placement, side.thread_cpus()))}},
                clock::now() + handshake_timeout);
    } catch (...) {
        side.abort();
        throw;
    }
}

}  // namespace

json rdma_info() {
    auto inv = rdma::list_devices();
    json out = {{"available", inv.contains("devices") && !inv["devices"].empty()}, {"devices", inv.value("devices", json::array())}};
    if (inv.contains("reason")) out["reason"] = inv["reason"];
    return out;
}

void execute_rdma_points(daemon_context& ctx, frame_channel& ch, core::run_result& run, const event_sink& emit,
                         const std::atomic<bool>& cancel, std::uint64_t byte_cap, const run_placement& placement) {
    const auto& spec = run.spec;
    check_supported(spec);
    auto ep = open_endpoint(spec, ch, spec.local_memory);
    ch.send(core::frame_type::endpoint, {{"endpoint", rdma::to_json(ep->local_info())}}, clock::now() + handshake_timeout);
    const auto remote = ch.receive(clock::now() + handshake_timeout);
    if (remote.type != core::frame_type::endpoint) throw session_error("peer did not answer with its RDMA endpoint");
    ep->connect(rdma::endpoint_info_from_json(remote.body.at("endpoint")));
    run.warnings.push_back(fmt::format("RDMA on {}, path MTU {} bytes", ep->where(), ep->path_mtu()));
    for (auto& n : gpu_memory_notes(*ep, spec.local_memory, "initiator")) run.warnings.push_back(std::move(n));
    for (auto& n : peer_memory_notes(remote.body)) run.warnings.push_back(std::move(n));

    measure_all_points(run, fmt::format("rdma {} ", core::to_string(spec.op)), emit, cancel,
                       [&](core::test_kind test, std::uint64_t size, std::size_t index) {
                           return measure_point(ctx, ch, *ep, spec, test, size, index, byte_cap, placement, cancel);
                       });
}

void serve_rdma_points(daemon_context& ctx, frame_channel& ch, const core::run_spec& spec, std::uint64_t byte_cap,
                       const run_placement& placement) {
    check_supported(spec);
    const auto first = ch.receive(clock::now() + handshake_timeout);
    if (first.type != core::frame_type::endpoint) throw session_error("expected the initiator's RDMA endpoint");
    std::unique_ptr<rdma::endpoint> ep;
    try {
        ep = open_endpoint(spec, ch, spec.remote_memory);
        ep->connect(rdma::endpoint_info_from_json(first.body.at("endpoint")));
    } catch (const std::exception& e) {
        throw session_error(fmt::format("RDMA setup failed at the peer: {}", e.what()));
    }
    ch.send(core::frame_type::endpoint,
            {{"endpoint", rdma::to_json(ep->local_info())}, {"memory_notes", gpu_memory_notes(*ep, spec.remote_memory, "peer")}},
            clock::now() + handshake_timeout);
    log_info("session {}: RDMA on {}", ch.peer_name(), ep->where());
    (void)ctx;
    while (true) {
        const auto m = ch.receive(clock::now() + idle_session_timeout);
        if (m.type == core::frame_type::bye) return;
        if (m.type == core::frame_type::point_begin) serve_point(ch, *ep, spec, m.body, byte_cap, placement);
        else throw session_error("unexpected frame between RDMA points");
    }
}

}  // namespace meshperf::daemon
