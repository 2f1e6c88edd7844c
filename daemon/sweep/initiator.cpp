#include "daemon/sweep/initiator.hpp"

#include "core/json_fields.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/placement_summary.hpp"
#include "core/sizes.hpp"
#include "core/sweep_drift.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/session/peer_upgrade.hpp"
#include "daemon/sweep/rdma_points.hpp"
#include "daemon/session/run_placement.hpp"
#include "daemon/session/session_opening.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/sweep/tcp_points.hpp"
#include "daemon/sweep/rail_addresses.hpp"
#include "transport/http_client.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <thread>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;
namespace tcp = transport::tcp;

/// Takes this daemon's gate for the run; gives it back while waiting for a busy peer, so
/// two daemons starting runs against each other cannot block each other for long.
class gate_hold {
public:
    gate_hold(measurement_gate& g, std::string who) : g_(g), who_(std::move(who)) {}
    bool try_take(std::string& holder) {
        lease_ = g_.try_acquire(who_, holder);
        return static_cast<bool>(lease_);
    }
    void release() { lease_.release(); }

private:
    measurement_gate& g_;
    std::string who_;
    measurement_gate::lease lease_;
};

frame_channel open_session(daemon_context& ctx, const transport::endpoint_address& peer, gate_hold& gate,
                           const event_sink& emit, const std::atomic<bool>& cancel) {
    busy_wait waiter(emit, cancel);
    auto wait_busy = [&](const std::string& why) {
        if (!waiter.wait(why)) throw session_error(waiter.gave_up(why));
    };
    while (true) {
        std::string holder;
        if (!gate.try_take(holder)) {
            wait_busy(fmt::format("this daemon is busy ({})", holder));
            continue;
        }
        auto attempt = try_open_session(ctx, peer);
        if (attempt.channel) return std::move(*attempt.channel);
        gate.release();
        if (attempt.busy()) {
            wait_busy(fmt::format("peer {} is busy: {}", peer.to_string(), attempt.why));
            continue;
        }
        throw refusal_error(peer, attempt);
    }
}

}  // namespace

namespace {

/// One latency test's drift check while its points run (core/sweep_drift.hpp): the readings
/// of the reference, then the drift applied and the falling points rechecked. Whatever way
/// the test ends, the check is kept in run.drift with the readings it has.
class drift_check {
public:
    drift_check(core::run_result& run, core::test_kind test, std::size_t& index, const point_measurer& measure)
        : run_(run), index_(index), measure_(measure) {
        if (core::wants_drift_check(run.spec, test)) d_ = core::sweep_drift{test, run.spec.sizes.front(), {}, {}, 0};
    }
    drift_check(const drift_check&) = delete;
    drift_check& operator=(const drift_check&) = delete;
    ~drift_check() {
        try {
            if (!d_) return;
            if (!applied_) apply();
            run_.drift.push_back(std::move(*d_));
        } catch (...) {
            // A failed run's figures stand without it; never throw from here.
        }
    }

    /// After the `done`-th point of the test (just appended to run.points): its first point
    /// is the first reading; the reference is measured again when core::reference_due.
    void after_point(std::size_t done) {
        if (!d_) return;
        if (done == 1) core::record_reading(*d_, 0, run_.points.back());
        else if (core::reference_due(done, run_.spec.sizes.size()))
            core::record_reading(*d_, done, measure_(point_key{d_->test, d_->size_bytes, ++index_}));
    }

    /// Once every point of the test is in: the drift applied, then each point the curve falls
    /// from by more than both points' precision measured again (core::points_to_recheck), in
    /// rounds while the curve still falls (a second reading in the same slow phase widens
    /// nothing), at most core::max_recheck_rounds.
    void finish(const std::atomic<bool>& cancel) {
        if (!d_) return;
        apply();
        for (std::size_t round = 0; round < core::max_recheck_rounds; ++round) {
            const auto again = core::points_to_recheck(run_, d_->test);
            if (again.empty()) break;
            for (auto i : again) {
                if (cancel.load()) throw run_cancelled();
                const auto& p = run_.points[i];
                core::apply_recheck(run_, *d_, i, measure_(point_key{p.test, p.size_bytes, ++index_}));
            }
        }
    }

private:
    void apply() {
        applied_ = true;
        core::settle(*d_);
        core::apply_drift(run_, *d_);
    }

    core::run_result& run_;
    std::size_t& index_;
    const point_measurer& measure_;
    std::optional<core::sweep_drift> d_;
    bool applied_ = false;
};

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
    std::size_t index = 0, counted = 0;
    for (auto test : spec.tests) {
        drift_check drift(run, test, index, measure);
        std::size_t done = 0;
        for (auto size : spec.sizes) {
            ++index;
            ++counted;
            if (cancel.load()) throw run_cancelled();
            try {
                run.points.push_back(measure(point_key{test, size, index}));
                emit({{"event", "point"}, {"index", counted}, {"total", total}, {"point", core::to_json(run.points.back())}});
                drift.after_point(++done);
            } catch (const run_cancelled&) {
                throw;
            } catch (const std::exception& e) {
                throw session_error(fmt::format("point {}/{} ({}{} {}) against peer {} failed: {}", counted, total, path,
                                                core::to_string(test), core::format_size(size), spec.peer, e.what()));
            }
        }
        try {
            drift.finish(cancel);
        } catch (const run_cancelled&) {
            throw;
        } catch (const std::exception& e) {
            throw session_error(fmt::format("re-measuring a {}{} point against peer {} failed: {}", path,
                                            core::to_string(test), spec.peer, e.what()));
        }
    }
}

void execute_run(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel) {
    const auto& spec = run.spec;
    for (const auto& memory : core::side_memories(spec, true)) require_memory_domain(memory, "initiator");
    const auto peer = transport::parse_endpoint(spec.peer);
    check_initiator_rails(ctx, spec);  // before the session: no stream, no token, goes where the request alone says
    gate_hold gate(ctx.gate, "run " + run.id);
    auto ch = open_session(ctx, peer, gate, emit, cancel);
    guard_session_socket(ch.fd());
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
    // A daemon listening on every address (0.0.0.0, ::) names itself by the address its
    // session to the peer leaves from, not "0.0.0.0:7470".
    try {
        if (const auto listen = transport::parse_endpoint(run.initiator.address);
            !session_ip.empty() && (listen.host == "0.0.0.0" || listen.host == "::"))
            run.initiator.address = transport::endpoint_address{session_ip, listen.port}.to_string();
    } catch (const core::spec_error&) {  // an address this daemon did not write: kept as it is
    }
    emit({{"event", "started"}, {"peer", core::to_json(run.peer)}});

    auto transport = spec.transport == core::transport_kind::rdma
                         ? make_rdma_initiator_transport(spec, byte_cap, placement.cpus, ctx.sweep_hooks)
                         : make_tcp_initiator_transport(ctx, peer, spec, byte_cap, placement.cpus);
    transport->open(ch, ok.body, run);
    measure_all_points(run, transport->path_label(), emit, cancel, [&](const point_key& key) {
        const auto ops = transport->point(key);
        return run_initiator_point(ch, spec, ctx.limits, placement, key, *ops, cancel, ctx.sysfs_root);
    });
    try {
        ch.send(core::frame_type::bye, json::object(), clock::now() + handshake_timeout);
    } catch (const session_error&) {
        // The measurements are complete; a peer that left early loses nothing of ours.
    }
}

}  // namespace meshperf::daemon
