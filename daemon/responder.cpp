#include "daemon/responder.hpp"

#include "core/json_fields.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "daemon/gpu_support.hpp"
#include "daemon/initiator.hpp"
#include "daemon/log.hpp"
#include "daemon/rdma_session.hpp"
#include "daemon/run_placement.hpp"
#include "daemon/session_protocol.hpp"
#include "transport/tcp/point_side.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;
namespace tcp = transport::tcp;

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
    std::uint64_t s = 0;
    for (auto x : v) s += x;
    return s;
}

void serve_point(daemon_context& ctx, frame_channel& ch, const core::run_spec& spec, const json& begin, std::uint64_t byte_cap,
                 const tcp::staged_stream_factory& memory, const run_placement& placement) {
    const auto test = core::parse_test_kind(begin.at("test").get<std::string>());
    const auto size = core::json_unsigned(begin.at("size"), "size");
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
    // Our senders stop at the agreed cap by themselves; what we receive is checked against
    // our own limit (plus the fixed-count warm-up), so an initiator that ignores it is cut off.
    tcp::point_side side(spec, test, size, std::move(fds), roles, byte_cap, memory);
    side.pin_to(placement.cpus);
    const std::uint64_t receive_limit =
        ctx.limits.max_bytes_per_point +
        (spec.iterations ? tcp::warm_messages(size) * size * core::streams_per_direction(spec, test) : 0);
    // Start only once the initiator holds every stream, so no data races its upgrade answer.
    const auto go = ch.receive(clock::now() + streams_timeout);
    if (go.type != core::frame_type::point_go)
        throw session_error(fmt::format("expected point_go, got {}", core::frame_type_name(static_cast<std::uint16_t>(go.type))));
    const auto t0 = clock::now();
    side.start();
    const bool reports = side.receivers() > 0 && !spec.iterations;
    bool told_to_stop = false;
    try {
        while (!side.finished()) {
            const auto received = side.received_bytes();
            if (side.receivers() > 0 && sum(received) > receive_limit) {
                side.abort();
                throw session_error(fmt::format("the initiator sent more than this daemon's limit of {} per point "
                                                "(limits.max_bytes_per_point): point stopped",
                                                core::format_size(ctx.limits.max_bytes_per_point)));
            }
            if (reports) {
                const double t = std::chrono::duration<double>(clock::now() - t0).count();
                ch.send(core::frame_type::progress, {{"t_s", t}, {"bytes", received}}, clock::now() + handshake_timeout);
            }
            if (auto m = ch.try_receive(clock::now() + progress_tick)) {
                if (m->type == core::frame_type::point_stop) {
                    side.stop();
                    told_to_stop = true;
                } else {
                    throw session_error(fmt::format("unexpected {} during a point", core::frame_type_name(static_cast<std::uint16_t>(m->type))));
                }
            }
        }
    } catch (...) {
        side.abort();
        side.join();
        throw;
    }
    side.join();
    // Streams that ended by themselves (the byte limit): report their last bytes at their end
    // of stream, so the initiator's window holds them all.
    const std::uint64_t n = side.receivers();
    const bool capped_here = reports && byte_cap && n && side.error().empty() &&
                             sum(side.received_bytes()) >= n * (std::max<std::uint64_t>(1, byte_cap / size / n) * size);
    if (reports && (capped_here || !told_to_stop) && side.error().empty())
        if (const auto end = side.last_receive_end_ns(); end > 0)
            ch.send(core::frame_type::progress,
                    {{"t_s", static_cast<double>(end - std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count()) / 1e9},
                     {"bytes", side.received_bytes()}},
                    clock::now() + handshake_timeout);
    ch.send(core::frame_type::point_done,
            {{"byte_cap_reached", side.byte_cap_reached() || capped_here},
             {"cpu_s", side.cpu_seconds()},
             {"wall_s", side.wall_seconds()},
             {"error", side.error()},
             {"verify_failed", side.verify_failed()},
             {"measured_bytes", side.measured_bytes()},
             {"begin_ns", side.begin_ns()},
             {"end_ns", side.end_ns()},
             {"placement", core::to_json(observed_placement(placement, side.thread_cpus()))}},
            clock::now() + handshake_timeout);
}

}  // namespace

void serve_session(daemon_context& ctx, frame_channel ch) {
    const std::string who = ch.peer_name();
    try {
        // A cut link or a vanished initiator ends the session (and frees the gate) in seconds.
        tcp::set_dead_path_timeout(ch.fd(), session_user_timeout_ms);
        const auto hello = ch.receive(clock::now() + handshake_timeout);
        if (hello.type != core::frame_type::hello) throw session_error("the session did not start with a hello");
        core::run_spec spec;
        try {
            spec = core::run_spec_from_json(hello.body.at("spec"), ctx.limits);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("this peer refuses the run spec: {}", e.what()));
        }
        tcp::staged_stream_factory memory;  // empty: host memory
        std::vector<std::string> notes;
        try {
            require_memory_domain(spec.remote_memory, "peer");
            if (spec.transport == core::transport_kind::tcp) {
                memory = tcp_stream_memory(spec.remote_memory, spec);
                notes = memory_notes(spec.remote_memory, "peer",
                                     transport::interface_for_address(transport::local_ip(ch.fd())), spec.transport);
            }
        } catch (const std::exception& e) {
            throw session_error(e.what());
        }
        run_placement placement;
        try {
            placement = peer_placement(spec, read_host_cpu_facts(), transport::local_ip(ch.fd()), hello.body);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("this peer refuses the run spec: {}", e.what()));
        }
        const auto byte_cap = agreed_byte_cap(ctx.limits, hello.body);
        ch.send(core::frame_type::hello_ok,
                {{"protocol", session_protocol_version()},
                 {"host", core::to_json(ctx.host)},
                 {"limits", {{"max_bytes_per_point", ctx.limits.max_bytes_per_point}}},
                 {"memory_notes", notes},
                 {"placement", hello_placement(placement)}},
                clock::now() + handshake_timeout);
        log_info("session {}: run {} accepted", who, hello.body.value("run_id", "?"));
        if (spec.transport == core::transport_kind::rdma) {
            serve_rdma_points(ctx, ch, spec, byte_cap, placement);
            log_info("session {}: finished", who);
            ctx.gate.release();
            return;
        }
        while (true) {
            const auto m = ch.receive(clock::now() + idle_session_timeout);
            if (m.type == core::frame_type::bye) break;
            if (m.type == core::frame_type::point_begin) serve_point(ctx, ch, spec, m.body, byte_cap, memory, placement);
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
