#include "daemon/initiator.hpp"

#include "core/json_fields.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/placement_summary.hpp"
#include "core/sizes.hpp"
#include "daemon/frame_channel.hpp"
#include "daemon/gpu_support.hpp"
#include "daemon/point_figures.hpp"
#include "daemon/rdma_session.hpp"
#include "daemon/run_placement.hpp"
#include "daemon/session_protocol.hpp"
#include "transport/http_client.hpp"
#include "transport/tcp/point_side.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <random>
#include <thread>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;
namespace tcp = transport::tcp;

std::string random_token() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}

std::string refusal_message(const transport::http_response& r) {
    const auto body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return {};
}

bool sleep_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>& cancel) {
    const auto until = clock::now() + d;
    while (clock::now() < until) {
        if (cancel.load()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !cancel.load();
}

transport::http_request upgrade_request(const daemon_context& ctx, std::string target) {
    transport::http_request req;
    req.target = std::move(target);
    req.headers[protocol_header] = std::to_string(session_protocol_version());
    if (!ctx.token.empty()) req.headers["Authorization"] = "Bearer " + ctx.token;
    return req;
}

/// Holds this daemon's gate for the run; released while waiting for a busy peer so two
/// daemons starting runs against each other cannot block each other for long.
class gate_hold {
public:
    gate_hold(measurement_gate& g, std::string who) : g_(g), who_(std::move(who)) {}
    ~gate_hold() { release(); }
    bool try_take(std::string& holder) { return held_ = g_.try_acquire(who_, holder); }
    void release() { if (held_) g_.release(); held_ = false; }

private:
    measurement_gate& g_;
    std::string who_;
    bool held_ = false;
};

frame_channel open_session(daemon_context& ctx, const transport::endpoint_address& peer, gate_hold& gate,
                           const event_sink& emit, const std::atomic<bool>& cancel) {
    const auto give_up = clock::now() + busy_peer_patience;
    std::mt19937 rng{std::random_device{}()};
    std::string last_wait;
    auto wait_busy = [&](const std::string& why) {
        if (why != last_wait) emit({{"event", "waiting"}, {"reason", why}});
        last_wait = why;
        if (clock::now() > give_up)
            throw session_error(fmt::format("gave up after {} s: {}", busy_peer_patience.count(), why));
        if (!sleep_unless_cancelled(std::chrono::milliseconds(150 + rng() % 500), cancel))
            throw run_cancelled();
    };
    while (true) {
        std::string holder;
        if (!gate.try_take(holder)) {
            wait_busy(fmt::format("this daemon is busy ({})", holder));
            continue;
        }
        transport::http_response refused;
        transport::upgraded_connection up;
        try {
            up = transport::http_upgrade(peer, upgrade_request(ctx, "/v1/session"), session_upgrade, handshake_timeout, refused,
                                         ctx.tls_client.get());
        } catch (const transport::tls_error& e) {
            throw session_error(fmt::format("cannot open a session with peer {}: {}", peer.to_string(), e.what()));
        } catch (const std::system_error& e) {
            throw session_error(fmt::format("cannot reach peer {}: {} (is meshperfd running there, and the port right?)",
                                            peer.to_string(), e.code().message()));
        } catch (const transport::http_protocol_error& e) {
            throw session_error(fmt::format("peer {} is not a meshperfd: it {}", peer.to_string(), e.what()));
        }
        if (up.stream) return frame_channel(std::move(up.stream), std::move(up.leftover), "peer " + peer.to_string());
        const auto why = refusal_message(refused);
        gate.release();
        if (refused.status == 503 && !why.empty()) {
            wait_busy(fmt::format("peer {} is busy: {}", peer.to_string(), why));
            continue;
        }
        if (refused.status == 426 || refused.status == 401 || refused.status == 403 || (refused.status / 100 == 4 && !why.empty()))
            throw session_error(fmt::format("peer {} refused the session: {}", peer.to_string(), why.empty() ? refused.reason : why));
        throw session_error(fmt::format("peer {} is not a meshperfd: it answered \"{} {}\" to the session upgrade",
                                        peer.to_string(), refused.status, refused.reason));
    }
}

std::vector<transport::socket_fd> open_streams(const daemon_context& ctx, const transport::endpoint_address& peer,
                                               const std::string& token, std::size_t count) {
    std::vector<transport::socket_fd> fds;
    for (std::size_t i = 0; i < count; ++i) {
        transport::http_response refused;
        auto up = transport::http_upgrade(peer, upgrade_request(ctx, fmt::format("/v1/stream?token={}&index={}", token, i)),
                                          data_upgrade, handshake_timeout, refused);
        if (!up.stream)
            throw session_error(fmt::format("peer refused data stream {}: {} {}", i, refused.status, refusal_message(refused)));
        if (!up.leftover.empty()) throw session_error("peer sent data before the stream started");
        fds.push_back(up.stream->release_socket());  // data streams are plain TCP, never TLS
    }
    return fds;
}

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// How long the peer may stay silent at the end of an adaptive or duration point (see
/// measure_point) before the point fails.
constexpr std::chrono::seconds peer_silence_limit{5};

/// Everything the initiator learns about one point while it runs.
struct point_run {
    const core::run_spec& spec;
    core::test_kind test;
    std::uint64_t size;
    std::vector<tcp::stream_role> roles;
    std::size_t forward_streams, reverse_streams;  // receivers at the peer / here
    core::flow_tracker forward, reverse;
    json peer_done;
    std::uint64_t byte_cap = 0;       // agreed max_bytes_per_point, per direction
    bool ended_by_itself = false;     // every local stream ended cleanly before we stopped them

    point_run(const core::run_spec& s, core::test_kind t, std::uint64_t sz)
        : spec(s), test(t), size(sz), roles(tcp::initiator_roles(t, s.streams, s.reverse)),
          forward_streams(static_cast<std::size_t>(std::count(roles.begin(), roles.end(), tcp::stream_role::send))),
          reverse_streams(static_cast<std::size_t>(std::count(roles.begin(), roles.end(), tcp::stream_role::receive))),
          forward(forward_streams, s.warmup_s), reverse(reverse_streams, s.warmup_s) {}

    bool fixed_length() const { return test == core::test_kind::latency || spec.iterations.has_value(); }

    /// The flows measured over time: at the peer (forward) and here (reverse).
    std::vector<tracked_flow> tracked() const {
        std::vector<tracked_flow> out;
        if (forward_streams) out.push_back({"initiator->peer", &forward});
        if (reverse_streams) out.push_back({"peer->initiator", &reverse});
        return out;
    }
};

void handle_progress(point_run& pr, const json& body) {
    if (!body.contains("t_s") || !body.contains("bytes")) return;
    const auto bytes = core::json_unsigned_list(body["bytes"], "bytes");
    pr.forward.add(body["t_s"].get<double>(), bytes);
}

/// Whether an adaptive or duration point ended because a flow moved its share of the byte cap.
bool stopped_at_byte_cap(const point_run& pr, const tcp::point_side& side) {
    if (!pr.byte_cap || pr.spec.iterations) return false;
    return side.byte_cap_reached() || pr.peer_done.value("byte_cap_reached", false);
}

core::point_result assemble(point_run& pr, tcp::point_side& side) {
    point_inputs in{pr.spec, pr.test, pr.size};
    in.local_cpu_s = side.cpu_seconds();
    in.local_wall_s = side.wall_seconds();
    in.peer_cpu_s = pr.peer_done.value("cpu_s", 0.0);
    in.peer_wall_s = pr.peer_done.value("wall_s", 0.0);
    in.sender_is_local = !pr.spec.reverse;
    if (stopped_at_byte_cap(pr, side)) in.byte_cap_reached = pr.byte_cap;
    if (pr.test == core::test_kind::latency) {
        in.latency = &side.latency();
    } else if (pr.spec.iterations) {
        if (pr.forward_streams) {
            const auto& d = pr.peer_done;
            in.fixed_flows.push_back(core::fixed_count_figures("initiator->peer", pr.size,
                                                               core::json_unsigned_list(d.at("measured_bytes"), "measured_bytes"),
                                                               core::json_signed_list(d.at("begin_ns"), "begin_ns"),
                                                               core::json_signed_list(d.at("end_ns"), "end_ns")));
        }
        if (pr.reverse_streams)
            in.fixed_flows.push_back(core::fixed_count_figures("peer->initiator", pr.size, side.measured_bytes(), side.begin_ns(), side.end_ns()));
    } else {
        in.tracked_flows = pr.tracked();
    }
    return assemble_point(in);
}

core::point_result measure_point(daemon_context& ctx, frame_channel& ch, const transport::endpoint_address& peer,
                                 const core::run_spec& spec, core::test_kind test, std::uint64_t size, std::size_t index,
                                 std::uint64_t byte_cap, const tcp::staged_stream_factory& memory,
                                 const run_placement& placement, const std::atomic<bool>& cancel) {
    point_run pr(spec, test, size);
    pr.byte_cap = byte_cap;
    const auto token = random_token();
    ch.send(core::frame_type::point_begin, {{"index", index}, {"test", core::to_string(test)}, {"size", size}, {"token", token}},
            clock::now() + handshake_timeout);
    const auto ready = ch.receive(clock::now() + handshake_timeout);
    if (ready.type != core::frame_type::point_ready)
        throw session_error(fmt::format("expected point_ready, got {}", core::frame_type_name(static_cast<std::uint16_t>(ready.type))));

    tcp::point_side side(spec, test, size, open_streams(ctx, peer, token, pr.roles.size()), pr.roles, byte_cap, memory);
    side.pin_to(placement.cpus);
    ch.send(core::frame_type::point_go, json::object(), clock::now() + handshake_timeout);
    const auto t0 = clock::now();
    auto last_heard = t0;  // the last frame from the peer
    side.start();
    const double cap = spec.warmup_s + spec.duration_s.value_or(spec.max_point_s);
    try {
        while (true) {
            const auto tick = clock::now() + progress_tick;
            while (auto m = ch.try_receive(tick)) {
                last_heard = clock::now();
                if (m->type == core::frame_type::progress) handle_progress(pr, m->body);
                else if (m->type == core::frame_type::point_done) { pr.peer_done = m->body; break; }
                else throw session_error(fmt::format("unexpected {} during a point", core::frame_type_name(static_cast<std::uint16_t>(m->type))));
            }
            if (pr.reverse_streams) pr.reverse.add(seconds(clock::now() - t0), side.received_bytes());
            const double elapsed = seconds(clock::now() - t0);
            if (cancel.load()) break;
            // Every local stream has ended: with an error (link cut, peer gone) the point is
            // lost, so stop now rather than running out its time; cleanly, the flows have
            // ended by themselves (the byte limit), and there is nothing more to measure.
            if (side.finished()) {
                pr.ended_by_itself = side.error().empty();
                break;
            }
            if (pr.fixed_length()) {
                if (elapsed > ctx.limits.max_run_s) throw session_error("the point ran past the run time limit");
                continue;
            }
            if (may_stop_at_cap(pr.tracked(), elapsed, cap) || (spec.adaptive() && flows_precise_enough(pr.tracked(), spec.precision))) break;
        }
    } catch (...) {
        side.abort();
        side.join();
        throw;
    }
    side.stop();
    const auto stopped_at = clock::now();
    if (!pr.fixed_length() || cancel.load()) {
        try {
            ch.send(core::frame_type::point_stop, json::object(), clock::now() + handshake_timeout);
        } catch (const session_error&) {
            side.abort();
            side.join();
            if (const auto e = side.error(); !e.empty()) throw session_error(fmt::format("data stream failed here: {}", e));
            throw;
        }
    }
    side.join();
    // Flows that ended by themselves: their last bytes arrived after the last 25 ms
    // snapshot; take one at the receivers' end of stream, so the window holds them all.
    if (pr.ended_by_itself && pr.reverse_streams)
        if (const auto end = side.last_receive_end_ns(); end > 0)
            pr.reverse.add(static_cast<double>(end - std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count()) / 1e9,
                           side.received_bytes());
    // A peer whose streams already failed here is unlikely to answer: do not wait long.
    const auto done_deadline = clock::now() + (side.error().empty() ? point_done_timeout : failed_point_done_timeout);
    // In an adaptive or duration point a live peer is never quiet for long: it reports every
    // 25 ms while it receives, and answers point_stop at once otherwise. Silence means the
    // path or the peer is gone (a link cut after the last report): say so without waiting
    // out the timeouts.
    const bool peer_reports = pr.forward_streams > 0;
    try {
        while (pr.peer_done.is_null()) {
            auto deadline = done_deadline;
            bool silent = false;
            if (!pr.fixed_length()) {
                const auto quiet_until = (peer_reports ? last_heard : std::max(last_heard, stopped_at)) + peer_silence_limit;
                if (quiet_until < deadline) {
                    deadline = quiet_until;
                    silent = true;
                }
            }
            auto m = ch.try_receive(deadline);
            if (!m) {
                if (silent)
                    throw session_error(fmt::format("{} did not answer in time: nothing from it for {} s at the end of the point "
                                                    "(link down, or the peer host gone or frozen?)",
                                                    ch.peer_name(), peer_silence_limit.count()));
                throw session_error(fmt::format("{} did not answer in time", ch.peer_name()));
            }
            last_heard = clock::now();
            if (m->type == core::frame_type::point_done) pr.peer_done = m->body;
            else if (m->type == core::frame_type::progress) handle_progress(pr, m->body);
        }
    } catch (const session_error& e) {
        // Our own streams' failure says more than the silence that followed it.
        if (const auto local = side.error(); !local.empty())
            throw session_error(fmt::format("data stream failed here: {}; the peer did not report either ({})", local, e.what()));
        throw;
    }
    if (cancel.load()) throw run_cancelled();
    if (side.verify_failed() || pr.peer_done.value("verify_failed", false))
        throw session_error("data verification failed: received bytes did not match the pattern (data corrupted)");
    if (const auto e = side.error(); !e.empty()) throw session_error(fmt::format("data stream failed here: {}", e));
    if (const auto e = pr.peer_done.value("error", ""); !e.empty()) throw session_error(fmt::format("data stream failed at the peer: {}", e));
    auto point = assemble(pr, side);
    point.placement = point_placement_at_initiator(placement, side.thread_cpus(), pr.peer_done);
    return point;
}

void add_memory_notes(core::run_result& run, const std::vector<std::string>& notes) {
    run.warnings.insert(run.warnings.end(), notes.begin(), notes.end());
}

}  // namespace

void measure_all_points(core::run_result& run, std::string_view path, const event_sink& emit,
                        const std::atomic<bool>& cancel, const point_measurer& measure) {
    const auto& spec = run.spec;
    const std::size_t total = spec.tests.size() * spec.sizes.size();
    // Placement warnings cover the points measured, whether the run completes or fails.
    struct placement_warnings_at_exit {
        core::run_result& run;
        ~placement_warnings_at_exit() {
            try {
                for (auto& w : core::placement_warnings(run)) run.warnings.push_back(std::move(w));
            } catch (...) {
            }
        }
    } placement_warnings{run};
    std::size_t index = 0;
    for (auto test : spec.tests)
        for (auto size : spec.sizes) {
            ++index;
            if (cancel.load()) throw run_cancelled();
            try {
                run.points.push_back(measure(test, size, index));
                emit({{"event", "point"}, {"index", index}, {"total", total}, {"point", core::to_json(run.points.back())}});
            } catch (const run_cancelled&) {
                throw;
            } catch (const std::exception& e) {
                throw session_error(fmt::format("point {}/{} ({}{} {}) against peer {} failed: {}", index, total, path,
                                                core::to_string(test), core::format_size(size), spec.peer, e.what()));
            }
        }
}

void execute_run(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel) {
    const auto& spec = run.spec;
    require_memory_domain(spec.local_memory, "initiator");
    const auto peer = transport::parse_endpoint(spec.peer);
    gate_hold gate(ctx.gate, "run " + run.id);
    auto ch = open_session(ctx, peer, gate, emit, cancel);
    // A cut link or a vanished peer ends the session in seconds, whatever step it is in.
    tcp::set_dead_path_timeout(ch.fd(), session_user_timeout_ms);
    const auto session_ip = transport::local_ip(ch.fd());
    auto placement = initiator_placement(spec, read_host_cpu_facts(), session_ip);
    ch.send(core::frame_type::hello,
            {{"protocol", session_protocol_version()}, {"version", MESHPERF_VERSION}, {"run_id", run.id},
             {"spec", core::to_json(core::spec_for_peer(spec))}, {"initiator", core::to_json(ctx.host)},
             {"limits", {{"max_bytes_per_point", ctx.limits.max_bytes_per_point}}},
             {"placement", hello_placement(placement)}},
            clock::now() + handshake_timeout);
    const auto ok = ch.receive(clock::now() + handshake_timeout);
    if (ok.type != core::frame_type::hello_ok) throw session_error("peer answered the hello with an unexpected frame");
    settle_initiator_placement(placement, spec, session_ip, ok.body);
    const auto byte_cap = agreed_byte_cap(ctx.limits, ok.body);
    run.peer = core::host_info_from_json(ok.body.value("host", json::object()));
    run.peer.address = spec.peer;
    emit({{"event", "started"}, {"peer", core::to_json(run.peer)}});
    if (spec.transport == core::transport_kind::rdma) {
        execute_rdma_points(ctx, ch, run, emit, cancel, byte_cap, placement);
        ch.send(core::frame_type::bye, json::object(), clock::now() + handshake_timeout);
        return;
    }

    const auto memory = tcp_stream_memory(spec.local_memory, spec);
    add_memory_notes(run, memory_notes(spec.local_memory, "initiator", transport::interface_for_address(transport::local_ip(ch.fd())),
                                       spec.transport));
    add_memory_notes(run, peer_memory_notes(ok.body));
    measure_all_points(run, "", emit, cancel, [&](core::test_kind test, std::uint64_t size, std::size_t index) {
        return measure_point(ctx, ch, peer, spec, test, size, index, byte_cap, memory, placement, cancel);
    });
    try {
        ch.send(core::frame_type::bye, json::object(), clock::now() + handshake_timeout);
    } catch (const session_error&) {
        // The measurements are complete; a peer that left early loses nothing of ours.
    }
}

}  // namespace meshperf::daemon
