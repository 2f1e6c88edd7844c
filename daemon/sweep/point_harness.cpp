#include "daemon/sweep/point_harness.hpp"

#include "core/json_fields.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string frame_name(core::frame_type t) { return core::frame_type_name(static_cast<std::uint16_t>(t)); }

// The peer's JSON is not trusted: a field of the wrong type is a protocol error, not a crash.
bool peer_flag(const json& body, const char* field) {
    if (!body.contains(field)) return false;
    if (!body[field].is_boolean()) throw session_error(fmt::format("the peer sent a malformed \"{}\"", field));
    return body[field].get<bool>();
}

std::string peer_text(const json& body, const char* field) {
    if (!body.contains(field)) return {};
    if (!body[field].is_string()) throw session_error(fmt::format("the peer sent a malformed \"{}\"", field));
    return body[field].get<std::string>();
}

double peer_seconds(const json& body, const char* field) {
    if (!body[field].is_number()) throw session_error(fmt::format("the peer sent a malformed \"{}\"", field));
    return body[field].get<double>();
}

/// Sends the initiator's heartbeat frame at most once per session_heartbeat_interval, so
/// the peer can tell a long point from a frozen initiator (and free its gate for the second).
class heartbeat_sender {
public:
    void maybe_send(frame_channel& ch) {
        const auto now = clock::now();
        if (now - last_ < session_heartbeat_interval) return;
        ch.send(core::frame_type::heartbeat, json::object(), now + handshake_timeout);
        last_ = now;
    }

private:
    clock::time_point last_ = clock::now();
};

/// One frame from the peer during or after a point: progress reports go to the transport,
/// point_done is kept; anything else breaks the protocol.
void take_point_frame(const session_message& m, initiator_point& ops, json& peer_done) {
    if (m.type == core::frame_type::progress) {
        if (!m.body.contains("t_s") || !m.body.contains("bytes")) return;
        ops.peer_progress(peer_seconds(m.body, "t_s"), core::json_unsigned_list(m.body["bytes"], "bytes"));
    } else if (m.type == core::frame_type::point_done) {
        peer_done = m.body;
    } else {
        throw session_error(fmt::format("unexpected {} during a point", frame_name(m.type)));
    }
}

/// The measured phase: decides every tick whether the point is over. Returns the moment
/// the peer was last heard from, and fills peer_done when the peer ended first.
clock::time_point measure(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                          bool fixed_length, initiator_point& ops, const std::atomic<bool>& cancel, json& peer_done,
                          point_link_counters& link) {
    link.at_start();
    const auto t0 = clock::now();
    auto last_heard = t0;
    ops.start();
    const double cap = spec.warmup_s + spec.duration_s.value_or(spec.max_point_s);
    heartbeat_sender heartbeat;
    while (true) {
        heartbeat.maybe_send(ch);
        const auto tick = clock::now() + progress_tick;
        while (auto m = ch.try_receive(tick)) {
            last_heard = clock::now();
            take_point_frame(*m, ops, peer_done);
            if (!peer_done.is_null()) break;
        }
        const double elapsed = seconds(clock::now() - t0);
        ops.sample(elapsed);
        link.at_tick(elapsed);
        if (cancel.load()) break;
        // This side's work has ended: with an error (link cut, peer gone) the point is lost,
        // so stop now rather than running out its time; cleanly, there is nothing more to
        // measure (fixed count done, byte limit reached).
        if (ops.ended()) break;
        if (fixed_length) {
            if (elapsed > limits.max_run_s) throw session_error("the point ran past the run time limit");
            continue;
        }
        if (ops.at_byte_cap()) break;
        const auto flows = ops.flows();
        if (may_stop_at_cap(flows, elapsed, cap) || (spec.adaptive() && flows_precise_enough(flows, spec.precision))) break;
    }
    return last_heard;
}

/// Waits for the peer's point_done. In an adaptive or duration point a live peer is never
/// quiet for long (it reports while it receives, and answers point_stop soon otherwise):
/// silence means the path or the peer is gone, said without waiting out the timeouts.
void await_point_done(frame_channel& ch, bool fixed_length, initiator_point& ops, clock::time_point last_heard,
                      clock::time_point stopped_at, json& peer_done) {
    // A peer whose data already failed here is unlikely to answer: do not wait long.
    const auto done_deadline = clock::now() + (ops.error().empty() ? point_done_timeout : failed_point_done_timeout);
    const bool peer_reports = ops.peer_reports_until_done();
    const auto silence = ops.peer_silence_limit();
    heartbeat_sender heartbeat;
    try {
        while (peer_done.is_null()) {
            heartbeat.maybe_send(ch);
            auto deadline = done_deadline;
            bool silent = false;
            if (!fixed_length) {
                const auto quiet_until = (peer_reports ? last_heard : std::max(last_heard, stopped_at)) + silence;
                if (quiet_until < deadline) {
                    deadline = quiet_until;
                    silent = true;
                }
            }
            // Wake at least once a heartbeat interval to send the next one.
            const auto wake = clock::now() + session_heartbeat_interval;
            auto m = ch.try_receive(std::min(deadline, wake));
            if (!m && clock::now() < deadline) continue;
            if (!m) {
                if (silent)
                    throw session_error(fmt::format("{} did not answer in time: nothing from it for {} s at the end of the point "
                                                    "(link down, or the peer host gone or frozen?)",
                                                    ch.peer_name(), silence.count()));
                throw session_error(fmt::format("{} did not answer in time", ch.peer_name()));
            }
            last_heard = clock::now();
            take_point_frame(*m, ops, peer_done);
        }
    } catch (const session_error& e) {
        // This side's own failure says more than the silence that followed it.
        if (const auto local = ops.error(); !local.empty())
            throw session_error(fmt::format("{} failed here: {}; the peer did not report either ({})", ops.data_path_name(),
                                            local, e.what()));
        throw;
    }
}

core::point_result drive_initiator_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                                         const run_placement& placement, const point_key& key, initiator_point& ops,
                                         const std::atomic<bool>& cancel, const std::filesystem::path& sysfs_root) {
    const bool fixed_length = key.test == core::test_kind::latency || spec.iterations.has_value();
    json begin = ops.begin_fields();
    begin["index"] = key.index;
    begin["test"] = core::to_string(key.test);
    begin["size"] = key.size;
    ch.send(core::frame_type::point_begin, begin, clock::now() + handshake_timeout);
    ops.arm();
    const auto ready = ch.receive(clock::now() + handshake_timeout);
    if (ready.type != core::frame_type::point_ready)
        throw session_error(fmt::format("expected point_ready, got {}", frame_name(ready.type)));
    ops.connect();
    point_link_counters link(sysfs_root, ch, ops.device_counters(), spec, fixed_length, /*initiator=*/true,
                             ops.rail_device_counters());
    ch.send(core::frame_type::point_go, json::object(), clock::now() + handshake_timeout);

    json peer_done;
    const auto last_heard = measure(ch, spec, limits, fixed_length, ops, cancel, peer_done, link);
    const auto stop_body = ops.stop(fixed_length, cancel.load());
    const auto stopped_at = clock::now();
    if (!stop_body.is_null()) {
        try {
            ch.send(core::frame_type::point_stop, stop_body, clock::now() + handshake_timeout);
        } catch (const session_error&) {
            ops.abort();
            if (const auto e = ops.error(); !e.empty())
                throw session_error(fmt::format("{} failed here: {}", ops.data_path_name(), e));
            throw;
        }
    }
    ops.settle();
    await_point_done(ch, fixed_length, ops, last_heard, stopped_at, peer_done);
    // After point_done: the peer has received every byte this end sent, so this NIC's
    // counters hold all of the point's traffic, queued data drained at the link's pace included.
    link.at_end();
    ops.finish(peer_done);
    if (cancel.load()) throw run_cancelled();
    // Name the end whose check failed: corruption seen here came from the peer's sending side or the path.
    if (ops.verify_failed() || peer_flag(peer_done, "verify_failed"))
        throw session_error(fmt::format("data verification failed {}: received bytes did not match the pattern (data corrupted)",
                                        ops.verify_failed() ? "at the initiator" : "at the peer"));
    if (const auto e = ops.error(); !e.empty()) throw session_error(fmt::format("{} failed here: {}", ops.data_path_name(), e));
    if (const auto e = peer_text(peer_done, "error"); !e.empty())
        throw session_error(fmt::format("{} failed at the peer: {}", ops.data_path_name(), e));
    auto point = ops.figures(peer_done);
    attach_link_counters(point, link.counters(), peer_link_counters(peer_done, spec.rails.size()), spec.rails);
    point.placement = point_placement_at_initiator(placement, ops.thread_cpus(), peer_done);
    return point;
}

void drive_responder_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                           const run_placement& placement, const point_key& key, responder_point& ops,
                           const std::filesystem::path& sysfs_root) {
    ops.arm();
    ch.send(core::frame_type::point_ready, json::object(), clock::now() + handshake_timeout);
    ops.connect();
    // Start only once the initiator holds everything, so no data races its answers.
    const auto go = ch.receive(clock::now() + streams_timeout);
    if (go.type != core::frame_type::point_go)
        throw session_error(fmt::format("expected point_go, got {}", frame_name(go.type)));
    const bool fixed_length = key.test == core::test_kind::latency || spec.iterations.has_value();
    // The initiator ends an adaptive or duration point by its time cap (and grace); a fixed
    // count by the run time limit. Past that it is gone or broken.
    const double allowed_s = fixed_length ? spec.warmup_s + limits.max_run_s
                                          : spec.warmup_s + spec.max_point_s + spec.duration_s.value_or(0) + core::point_overrun_bound_s + 60;
    const auto t0 = clock::now();
    const auto give_up = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(allowed_s));
    const auto silence = initiator_silence(limits);
    auto last_heard = t0;
    point_link_counters link(sysfs_root, ch, ops.device_counters(), spec, fixed_length, /*initiator=*/false,
                             ops.rail_device_counters());
    link.at_start();
    ops.start();
    bool stop_received = false;
    while (!ops.ended(stop_received)) {
        if (clock::now() > give_up) throw session_error("the initiator never ended the point");
        if (clock::now() - last_heard > silence) throw session_error(initiator_silence_message(ch.peer_name(), limits));
        const double elapsed = seconds(clock::now() - t0);
        ops.sample(elapsed);
        link.at_tick(elapsed);
        ops.check_limits();
        if (ops.reports())
            ch.send(core::frame_type::progress, {{"t_s", seconds(clock::now() - t0)}, {"bytes", ops.counted_bytes()}},
                    clock::now() + handshake_timeout);
        if (auto m = ch.try_receive(clock::now() + progress_tick)) {
            last_heard = clock::now();
            if (m->type == core::frame_type::heartbeat) continue;
            if (m->type != core::frame_type::point_stop)
                throw session_error(fmt::format("unexpected {} during a point", frame_name(m->type)));
            ops.stop(m->body);
            stop_received = true;
        }
    }
    link.at_end();  // every stream ended here: what this end received, all of it; what it sent, handed to its NIC's queue
    ops.finish(stop_received);
    if (const auto last = ops.final_report())
        ch.send(core::frame_type::progress, {{"t_s", last->t_s}, {"bytes", last->bytes}}, clock::now() + handshake_timeout);
    json done = ops.done_fields();
    done["cpu_s"] = ops.cpu_seconds();
    done["wall_s"] = ops.wall_seconds();
    done["error"] = ops.error();
    done["verify_failed"] = ops.verify_failed();
    done["placement"] = core::to_json(observed_placement(placement, ops.thread_cpus()));
    add_link_counters(done, link.counters());
    ch.send(core::frame_type::point_done, done, clock::now() + handshake_timeout);
}

}  // namespace

core::point_result run_initiator_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                                       const run_placement& placement, const point_key& key, initiator_point& ops,
                                       const std::atomic<bool>& cancel, const std::filesystem::path& sysfs_root) {
    try {
        return drive_initiator_point(ch, spec, limits, placement, key, ops, cancel, sysfs_root);
    } catch (...) {
        ops.abort();
        throw;
    }
}

point_key parse_point_begin(const core::run_spec& spec, const json& begin) {
    point_key key{};
    try {
        key.test = core::parse_test_kind(begin.at("test").get<std::string>());
        key.size = core::json_unsigned(begin.at("size"), "size");
        key.index = static_cast<std::size_t>(core::json_unsigned(begin.at("index"), "index", UINT32_MAX));
    } catch (const std::exception& e) {
        throw session_error(fmt::format("a malformed point_begin: {}", e.what()));
    }
    if (std::find(spec.sizes.begin(), spec.sizes.end(), key.size) == spec.sizes.end() ||
        std::find(spec.tests.begin(), spec.tests.end(), key.test) == spec.tests.end())
        throw session_error(fmt::format("the initiator asked for a point outside the agreed run spec ({} {})",
                                        core::to_string(key.test), key.size));
    return key;
}

void run_responder_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                         const run_placement& placement, const point_key& key, responder_point& ops,
                         const std::filesystem::path& sysfs_root) {
    try {
        drive_responder_point(ch, spec, limits, placement, key, ops, sysfs_root);
    } catch (...) {
        ops.abort();
        throw;
    }
}

}  // namespace meshperf::daemon
