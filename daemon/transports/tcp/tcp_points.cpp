#include "daemon/transports/tcp/tcp_points.hpp"

#include "core/units.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/json_fields.hpp"
#include "core/point_counters.hpp"
#include "core/sizes.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/session/peer_upgrade.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/transports/tcp/tcp_rail_failures.hpp"
#include "daemon/transports/tcp/tcp_rail_memory.hpp"
#include "transport/tcp/point_side.hpp"
#include "transport/tcp/staged_stream.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <random>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;
namespace tcp = transport::tcp;

std::string random_token() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}


std::int64_t ns_since_epoch(clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

/// Where stream `i` of a point goes and leaves from: the peer's session address, or with
/// rails the address of its rail (rail_of_stream over its index among the streams of its
/// role) at the peer daemon's port, leaving from this side's address on that rail.
struct stream_route {
    transport::endpoint_address to;
    std::string from;               ///< empty: any local address
    const core::rail_pair* rail = nullptr;
};

stream_route route_of_stream(const core::run_spec& spec, const transport::endpoint_address& peer,
                             const std::vector<tcp::stream_role>& roles, std::size_t i) {
    if (spec.rails.empty()) return {peer, {}, nullptr};
    const auto& rail = spec.rails.at(core::rail_of_stream(tcp_rails::index_in_role(roles, i), spec.streams));
    return {{rail.peer_address, peer.port}, rail.local_address, &rail};
}

/// Opens the point's data streams: upgraded connections to the peer's port, in role order.
std::vector<transport::socket_fd> open_streams(const daemon_context& ctx, const core::run_spec& spec,
                                               const transport::endpoint_address& peer, const std::string& token,
                                               const std::vector<tcp::stream_role>& roles) {
    std::vector<transport::socket_fd> fds;
    for (std::size_t i = 0; i < roles.size(); ++i) {
        const auto route = route_of_stream(spec, peer, roles, i);
        const auto where = route.rail ? fmt::format(" on rail {} ({} -> {})", route.rail->name, route.from, route.to.to_string())
                                      : std::string();
        transport::http_response refused;
        transport::upgraded_connection up;
        try {
            up = transport::http_upgrade(route.to, upgrade_request(ctx, fmt::format("/v1/stream?token={}&index={}", token, i)),
                                         data_upgrade, handshake_timeout, refused, nullptr, route.from);
        } catch (const std::exception& e) {
            if (!route.rail) throw;
            // A rail the peer daemon cannot be reached on: say which, and the usual causes.
            throw session_error(fmt::format("data stream {}{}: {} (the peer daemon must listen on every address, e.g. listen = "
                                            "\"0.0.0.0:{}\", and the rail's route must leave by that rail)",
                                            i, where, e.what(), peer.port));
        }
        if (!up.stream)
            throw session_error(fmt::format("peer refused data stream {}{}: {} {}", i, where, refused.status, refusal_message(refused)));
        if (!up.leftover.empty()) throw session_error("peer sent data before the stream started");
        fds.push_back(up.stream->release_socket());  // data streams are plain TCP, never TLS
    }
    return fds;
}

std::size_t count_role(const std::vector<tcp::stream_role>& roles, tcp::stream_role r) {
    return static_cast<std::size_t>(std::count(roles.begin(), roles.end(), r));
}

/// The TCP counters of the peer's sending streams in its point_done; empty from a peer that
/// does not send them (an older meshperfd) or could not read them: unknown, not zero.
std::optional<core::tcp_point_counters> peer_tcp_counters(const json& peer_done) {
    const auto it = peer_done.find("tcp_counters");
    if (it == peer_done.end() || it->is_null()) return std::nullopt;
    try {
        return core::tcp_point_counters_from_json(*it);
    } catch (const std::exception& e) {
        throw session_error(fmt::format("the peer sent a malformed \"tcp_counters\": {}", e.what()));
    }
}

/// The point's TCP counters: every sending side's together, or none when a side that sent
/// has none (a partial sum would read as a cleaner path than it was).
std::optional<core::tcp_point_counters> point_tcp_counters(bool local_sends, const std::optional<core::tcp_point_counters>& local,
                                                           bool peer_sends, const std::optional<core::tcp_point_counters>& peer) {
    if ((!local_sends && !peer_sends) || (local_sends && !local) || (peer_sends && !peer)) return std::nullopt;
    if (local_sends && peer_sends) return core::combined(*local, *peer);
    return local_sends ? local : peer;
}

/// Whether a tick at `elapsed_s` comes before the measured window opens: the senders' TCP
/// counters are read then (the last such reading counts), so the window holds no warm-up.
/// A fixed-count point's counters cover the whole point (they are read once, at its start).
bool before_window(const core::run_spec& spec, double elapsed_s) { return !spec.iterations && elapsed_s < spec.warmup_s; }

class tcp_initiator final : public initiator_point {
public:
    tcp_initiator(const daemon_context& ctx, const transport::endpoint_address& peer, const core::run_spec& spec,
                  const point_key& key, std::uint64_t byte_cap, const side_stream_memory& memory,
                  const std::vector<int>& cpus, point_rails::run_rails& rails)
        : ctx_(ctx), peer_(peer), run_spec_(spec), spec_(point_rails::point_spec(spec, rails.dropped)), key_(key), cpus_(cpus),
          roles_(tcp::initiator_roles(key.test, core::streams_per_direction(spec_, key.test), spec.reverse)),
          forward_streams_(count_role(roles_, tcp::stream_role::send)),
          reverse_streams_(count_role(roles_, tcp::stream_role::receive)), forward_(forward_streams_, spec.warmup_s),
          reverse_(reverse_streams_, spec.warmup_s), byte_cap_(byte_cap), memory_(memory), token_(random_token()),
          rails_(rails), tolerant_(point_rails::tolerates_rail_failures(spec_, key.test)) {}

    json begin_fields() override {
        json f = {{"token", token_}};
        rails_.add_begin_fields(f, tolerant_);
        return f;
    }

    void connect() override {
        side_ = std::make_unique<tcp::point_side>(spec_, key_.test, key_.size, open_streams(ctx_, spec_, peer_, token_, roles_),
                                                  roles_, byte_cap_, memory_.for_point(spec_, roles_));
        if (ctx_.sweep_hooks.corrupt_tcp) side_->corrupt_sent_for_test();
        side_->pin_to(cpus_);
    }

    void start() override {
        side_->read_tcp_counters_before_window();
        t0_ = clock::now();
        side_->start();
    }

    // The peer measures what it receives (forward), this side what it receives (reverse).
    // After the stop, a report that moved nothing is the peer waiting on a stream (a dead
    // rail's, until its timeout), not the window: it would stretch the window with no bytes.
    void peer_progress(double t_s, const std::vector<std::uint64_t>& bytes) override {
        const auto moved = total_bytes(bytes);
        if (stopped_ && moved == peer_bytes_) return;
        peer_bytes_ = moved;
        forward_.add(t_s, bytes);
    }
    void sample(double elapsed_s) override {
        if (reverse_streams_) reverse_.add(elapsed_s, side_->received_bytes());
        if (!forward_streams_) return;
        if (before_window(spec_, elapsed_s)) side_->read_tcp_counters_before_window();
        else side_->read_tcp_counters_in_window();
    }
    std::vector<tracked_flow> flows() const override {
        std::vector<tracked_flow> out;
        if (forward_streams_) out.push_back({"initiator->peer", &forward_});
        if (reverse_streams_) out.push_back({"peer->initiator", &reverse_});
        return out;
    }

    bool ended() override {
        if (!side_->finished()) return false;
        ended_by_itself_ = side_->error().empty();
        return true;
    }

    json stop(bool fixed_length, bool cancelled) override {
        side_->stop();
        stopped_ = true;
        // A fixed-length point ends by itself at the peer too; a stop would cut its senders short.
        return !fixed_length || cancelled ? json::object() : json();
    }

    void settle() override {
        side_->join();
        // The senders have ended: their last bytes acknowledged, or the drain bound passed.
        // The counters' window is the whole time the point's bytes moved, the drain after the
        // stop included (a lossy path retransmits most there).
        side_->read_tcp_counters_after_window();
        // Flows that ended by themselves: their last bytes arrived after the last 25 ms
        // snapshot; take one at the receivers' end of stream, so the window holds them all.
        if (ended_by_itself_ && reverse_streams_)
            if (const auto end = side_->last_receive_end_ns(); end > 0)
                reverse_.add(core::seconds_from_ns(static_cast<double>(end - ns_since_epoch(t0_))), side_->received_bytes());
    }

    bool peer_reports_until_done() const override { return forward_streams_ > 0; }
    std::chrono::seconds peer_silence_limit() const override { return std::chrono::seconds{5}; }
    std::string error() const override { return tcp_rails::side_error(side_.get(), spec_, roles_, tolerant_); }
    bool verify_failed() const override { return side_ && side_->verify_failed(); }
    std::string_view data_path_name() const override { return "data stream"; }
    std::vector<transport::thread_cpu_record> thread_cpus() const override {
        return side_ ? side_->thread_cpus() : std::vector<transport::thread_cpu_record>{};
    }

    core::point_result figures(const json& peer_done) override {
        point_inputs in{spec_, key_.test, key_.size};
        in.local_cpu_s = side_->cpu_seconds();
        in.local_wall_s = side_->wall_seconds();
        in.peer_cpu_s = peer_done.value("cpu_s", 0.0);
        in.peer_wall_s = peer_done.value("wall_s", 0.0);
        in.sender_is_local = !spec_.reverse;
        in.verified_here = side_->verified_bytes();
        in.verified_at_peer = peer_done.value("verified_bytes", std::uint64_t{0});  // an older peer: none said
        if (stopped_at_byte_cap(peer_done)) in.byte_cap_reached = byte_cap_;
        if (key_.test == core::test_kind::latency) {
            in.latency = &side_->latency();
        } else if (spec_.iterations) {
            if (forward_streams_)
                in.fixed_flows.push_back(core::fixed_count_figures(
                    "initiator->peer", key_.size, core::json_unsigned_list(peer_done.at("measured_bytes"), "measured_bytes"),
                    core::json_signed_list(peer_done.at("begin_ns"), "begin_ns"),
                    core::json_signed_list(peer_done.at("end_ns"), "end_ns")));
            if (reverse_streams_)
                in.fixed_flows.push_back(core::fixed_count_figures("peer->initiator", key_.size, side_->measured_bytes(),
                                                                   side_->begin_ns(), side_->end_ns()));
        } else {
            in.failed_rails = tolerant_ ? tcp_rails::point_rail_failures(*side_, peer_done, spec_, roles_)
                                        : std::vector<core::rail_failure>{};
            in.tracked_flows = flows_without(in.failed_rails);
        }
        if (key_.test != core::test_kind::latency)
            in.tcp_counters = point_tcp_counters(forward_streams_ > 0, side_->sent_tcp_counters(), reverse_streams_ > 0,
                                                 peer_tcp_counters(peer_done));
        in.dropped_rails = rails_.dropped;
        if (!in.dropped_rails.empty()) in.run_rails = &run_spec_.rails;
        auto point = assemble_point(in);
        rails_.drop(in.failed_rails, key_.index, key_.test, key_.size);
        return point;
    }

    void abort() noexcept override {
        if (!side_) return;
        side_->abort();
        side_->join();
    }

private:
    /// The flows with the streams of `failed` rails left out (their bytes count nothing).
    std::vector<tracked_flow> flows_without(const std::vector<core::rail_failure>& failed) {
        if (failed.empty()) return flows();
        std::vector<tracked_flow> out;
        if (forward_streams_) {
            forward_kept_.emplace(forward_.without_streams(point_rails::streams_on(failed, spec_, forward_streams_, spec_.streams)));
            out.push_back({"initiator->peer", &*forward_kept_});
        }
        if (reverse_streams_) {
            reverse_kept_.emplace(reverse_.without_streams(point_rails::streams_on(failed, spec_, reverse_streams_, spec_.streams)));
            out.push_back({"peer->initiator", &*reverse_kept_});
        }
        return out;
    }

    /// Whether an adaptive or duration point ended because a flow moved its share of the byte cap.
    bool stopped_at_byte_cap(const json& peer_done) const {
        if (!byte_cap_ || spec_.iterations) return false;
        return side_->byte_cap_reached() || peer_done.value("byte_cap_reached", false);
    }

    const daemon_context& ctx_;
    const transport::endpoint_address& peer_;
    const core::run_spec& run_spec_;
    core::run_spec spec_;  // the run's, less the rails dropped in earlier points
    point_key key_;
    const std::vector<int>& cpus_;
    std::vector<tcp::stream_role> roles_;
    std::size_t forward_streams_, reverse_streams_;  // receivers at the peer / here
    core::flow_tracker forward_, reverse_;
    std::optional<core::flow_tracker> forward_kept_, reverse_kept_;  // without a failed rail's streams
    std::uint64_t byte_cap_;
    const side_stream_memory& memory_;
    std::string token_;
    std::unique_ptr<tcp::point_side> side_;
    clock::time_point t0_{};
    bool ended_by_itself_ = false;  // every local stream ended cleanly before we stopped them
    point_rails::run_rails& rails_;
    bool tolerant_;  // a failed rail ends that rail alone
    bool stopped_ = false;         // stop() was called
    std::uint64_t peer_bytes_ = 0;  // the peer's last report, all streams
};

class tcp_responder final : public responder_point {
public:
    tcp_responder(daemon_context& ctx, const core::run_spec& spec, const point_key& key, const json& begin,
                  std::uint64_t byte_cap, const side_stream_memory& memory, const std::vector<int>& cpus)
        : ctx_(ctx), spec_(point_rails::point_spec(spec, point_rails::dropped_from_begin(begin, spec))), key_(key), cpus_(cpus),
          byte_cap_(byte_cap), memory_(memory) {
        if (!begin.contains("token") || !begin["token"].is_string())
            throw session_error("the initiator's point_begin names no data stream token");
        token_ = begin["token"].get<std::string>();
        // An initiator that keeps a point's other rails when one fails says so (an older one does not).
        tolerant_ = point_rails::tolerant_by_begin(begin, spec_, key.test);
        for (auto r : tcp::initiator_roles(key.test, core::streams_per_direction(spec_, key.test), spec_.reverse))
            roles_.push_back(tcp::mirror(r));
        // Our senders stop at the agreed cap by themselves; what we receive is checked against
        // our own limit (plus the fixed-count warm-up), so an initiator that ignores it is cut off.
        receive_limit_ = ctx.limits.max_bytes_per_point +
                         (spec.iterations ? tcp::warm_messages(key.size) * key.size * core::streams_per_direction(spec_, key.test) : 0);
    }

    void arm() override {
        ctx_.streams.open(token_, roles_.size());
        armed_ = true;
    }

    void connect() override {
        std::vector<transport::socket_fd> fds;
        try {
            fds = ctx_.streams.wait(token_, clock::now() + streams_timeout);
        } catch (const std::runtime_error& e) {
            throw session_error(fmt::format("data streams did not arrive: {}", e.what()));
        }
        side_ = std::make_unique<tcp::point_side>(spec_, key_.test, key_.size, std::move(fds), roles_, byte_cap_,
                                                  memory_.for_point(spec_, roles_));
        if (ctx_.sweep_hooks.corrupt_tcp) side_->corrupt_sent_for_test();
        side_->pin_to(cpus_);
    }

    void start() override {
        side_->read_tcp_counters_before_window();
        t0_ = clock::now();
        side_->start();
    }

    void sample(double elapsed_s) override {
        if (told_to_stop_) return;
        if (before_window(spec_, elapsed_s)) side_->read_tcp_counters_before_window();
        else side_->read_tcp_counters_in_window();
    }

    bool reports() const override { return side_->receivers() > 0 && !spec_.iterations; }
    std::vector<std::uint64_t> counted_bytes() const override { return side_->received_bytes(); }

    void check_limits() override {
        if (side_->receivers() > 0 && total_bytes(side_->received_bytes()) > receive_limit_) {
            side_->abort();
            throw session_error(fmt::format("the initiator sent more than this daemon's limit of {} per point "
                                            "(limits.max_bytes_per_point): point stopped",
                                            core::format_size(ctx_.limits.max_bytes_per_point)));
        }
    }

    void stop(const json&) override {
        side_->stop();
        told_to_stop_ = true;
    }
    bool ended(bool) const override {
        side_->close_overdue();  // receivers still waiting at the close bound end now
        return side_->finished();
    }

    void finish(bool) override {
        side_->join();
        // Every stream has ended (senders drained or at the drain bound): the counters cover
        // all the time this side's bytes moved.
        side_->read_tcp_counters_after_window();
        const std::uint64_t n = side_->receivers();
        capped_here_ = reports() && byte_cap_ && n && side_->error().empty() &&
                       total_bytes(side_->received_bytes()) >= n * (std::max<std::uint64_t>(1, byte_cap_ / key_.size / n) * key_.size);
    }

    // Streams that ended by themselves (the byte limit): their last bytes at their end of
    // stream, so the initiator's window holds them all.
    std::optional<progress_report> final_report() const override {
        if (!reports() || !(capped_here_ || !told_to_stop_) || !side_->error().empty()) return std::nullopt;
        const auto end = side_->last_receive_end_ns();
        if (end <= 0) return std::nullopt;
        return progress_report{core::seconds_from_ns(static_cast<double>(end - ns_since_epoch(t0_))), side_->received_bytes()};
    }

    json done_fields() override {
        json done = {{"byte_cap_reached", side_->byte_cap_reached() || capped_here_},
                     {"measured_bytes", side_->measured_bytes()},
                     {"begin_ns", side_->begin_ns()},
                     {"end_ns", side_->end_ns()},
                     {"verified_bytes", side_->verified_bytes()}};
        if (const auto c = side_->sent_tcp_counters()) done["tcp_counters"] = core::to_json(*c);
        if (tolerant_ && error().empty())  // streams that failed on some rails only: the initiator keeps the others
            if (const auto failed = tcp_rails::side_rail_failures(*side_, spec_, roles_, "at the peer"); !failed.empty())
                done["failed_rails"] = point_rails::to_json(failed);
        return done;
    }

    double cpu_seconds() const override { return side_->cpu_seconds(); }
    double wall_seconds() const override { return side_->wall_seconds(); }
    std::string error() const override { return tcp_rails::side_error(side_.get(), spec_, roles_, tolerant_); }
    bool verify_failed() const override { return side_ && side_->verify_failed(); }
    std::vector<transport::thread_cpu_record> thread_cpus() const override {
        return side_ ? side_->thread_cpus() : std::vector<transport::thread_cpu_record>{};
    }

    void abort() noexcept override {
        if (side_) {
            side_->abort();
            side_->join();
        } else if (armed_) {
            ctx_.streams.close(token_);  // streams that arrived are closed with it
        }
    }

private:
    daemon_context& ctx_;
    core::run_spec spec_;  // the run's, less the rails the initiator dropped in earlier points
    point_key key_;
    const std::vector<int>& cpus_;
    std::uint64_t byte_cap_;
    const side_stream_memory& memory_;
    std::string token_;
    bool tolerant_ = false;  // a failed rail ends that rail alone
    std::vector<tcp::stream_role> roles_;
    std::uint64_t receive_limit_ = 0;
    std::unique_ptr<tcp::point_side> side_;
    clock::time_point t0_{};
    bool armed_ = false;
    bool told_to_stop_ = false;
    bool capped_here_ = false;
};

/// How long the probe of a dropped rail may take before each point: a rail whose link is
/// still down costs each later point at most this (the rails are probed one after another).
constexpr std::chrono::milliseconds rail_probe_timeout{1000};

class tcp_initiator_transport final : public initiator_transport {
public:
    tcp_initiator_transport(const daemon_context& ctx, transport::endpoint_address peer, const core::run_spec& spec,
                            std::uint64_t byte_cap, std::vector<int> cpus)
        : ctx_(ctx), peer_(std::move(peer)), spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)) {}

    void open(frame_channel& ch, const json& hello_ok, core::run_result& run) override {
        memory_ = side_stream_memory(spec_, true, tcp_stream_memory);
        auto notes = side_memory_notes(spec_, true, transport::interface_for_address(transport::local_ip(ch.fd())));
        for (auto& n : peer_memory_notes(hello_ok)) notes.push_back(std::move(n));
        run.warnings.insert(run.warnings.end(), notes.begin(), notes.end());
        rails_.warnings = &run.warnings;
    }
    std::string path_label() const override { return ""; }
    std::unique_ptr<initiator_point> point(const point_key& key) override {
        // A rail dropped in an earlier point whose link carries a connection again (a TCP
        // connect from its address to the peer daemon's port at its address on the rail,
        // within rail_probe_timeout) is measured again from this point on.
        rails_.readmit(spec_, key.index, key.test, key.size, [&](const core::rail_pair& r) {
            try {
                transport::connect_tcp({r.peer_address, peer_.port}, rail_probe_timeout, r.local_address);
                return true;
            } catch (const std::exception&) {
                return false;
            }
        });
        return std::make_unique<tcp_initiator>(ctx_, peer_, spec_, key, byte_cap_, memory_, cpus_, rails_);
    }

private:
    const daemon_context& ctx_;
    transport::endpoint_address peer_;
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    side_stream_memory memory_;     // host memory until open()
    point_rails::run_rails rails_;          // rails that failed in earlier points
};

class tcp_responder_transport final : public responder_transport {
public:
    tcp_responder_transport(daemon_context& ctx, const frame_channel& ch, const core::run_spec& spec, std::uint64_t byte_cap,
                            std::vector<int> cpus)
        : ctx_(ctx), spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)), memory_(spec, false, tcp_stream_memory),
          notes_(side_memory_notes(spec, false, transport::interface_for_address(transport::local_ip(ch.fd())))) {}

    std::vector<std::string> hello_notes() const override { return notes_; }
    std::unique_ptr<responder_point> point(const point_key& key, const json& begin) override {
        return std::make_unique<tcp_responder>(ctx_, spec_, key, begin, byte_cap_, memory_, cpus_);
    }

private:
    daemon_context& ctx_;
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    side_stream_memory memory_;
    std::vector<std::string> notes_;
};

}  // namespace

std::unique_ptr<initiator_transport> make_tcp_initiator_transport(const daemon_context& ctx, transport::endpoint_address peer,
                                                                  const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus) {
    return std::make_unique<tcp_initiator_transport>(ctx, std::move(peer), spec, byte_cap, std::move(cpus));
}

std::unique_ptr<responder_transport> make_tcp_responder_transport(daemon_context& ctx, const frame_channel& ch,
                                                                  const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus) {
    return std::make_unique<tcp_responder_transport>(ctx, ch, spec, byte_cap, std::move(cpus));
}

}  // namespace meshperf::daemon
