#include "daemon/collective/coordinator.hpp"

#include "core/error.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/collective/mesh.hpp"
#include "daemon/collective/rdma_steps.hpp"
#include "daemon/collective/wire.hpp"
#include "daemon/sweep/point_harness.hpp"
#include "daemon/session/session_opening.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;

/// How a rank's part of one size ended, as the coordinator learnt it.
struct rank_outcome {
    enum class kind { reported, fault, lost, silent } how = kind::reported;
    std::string message;            ///< fault, lost: what was said or seen
    std::optional<unsigned> blame;  ///< fault: the rank it blames
    rank_timing timing;             ///< reported
};

/// Where the failure of a size is put: a rank whose daemon went away (its session closed)
/// first, then one that fell silent, then the rank the faults blame most.
std::optional<unsigned> culprit(const std::vector<rank_outcome>& out) {
    for (auto k : {rank_outcome::kind::lost, rank_outcome::kind::silent})
        for (unsigned r = 0; r < out.size(); ++r)
            if (out[r].how == k) return r;
    std::map<unsigned, int> votes;
    for (const auto& o : out)
        if (o.how == rank_outcome::kind::fault && o.blame) ++votes[*o.blame];
    if (votes.empty()) return std::nullopt;
    return std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

class coordinator {
public:
    coordinator(daemon_context& ctx, core::collective_result& result, const event_sink& emit, const std::atomic<bool>& cancel)
        : ctx_(ctx), r_(result), spec_(result.spec), emit_(emit), cancel_(cancel),
          p_(static_cast<unsigned>(spec_.hosts.size())),
          me_(static_cast<unsigned>(std::find(spec_.hosts.begin(), spec_.hosts.end(), core::coordinator_of(spec_)) -
                                    spec_.hosts.begin())),
          token_(new_mesh_token()), options_(run_options_of(spec_, ctx_.limits, ctx_.collective_hooks)), sessions_(p_) {}

    void run() {
        open_sessions();
        hand_out_plan();
        connect_mesh();
        json hosts = json::array();
        for (const auto& h : r_.hosts) hosts.push_back(core::to_json(h));
        emit_({{"event", "started"}, {"hosts", hosts}});
        const auto started = clock::now();
        const std::size_t total = spec_.ops.size() * spec_.sizes.size();
        std::size_t index = 0;
        for (auto op : spec_.ops)
            for (auto size : spec_.sizes) {
                if (cancel_.load()) throw run_cancelled();
                if (std::chrono::duration<double>(clock::now() - started).count() > ctx_.limits.max_run_s)
                    throw collective_run_error(fmt::format("the run took longer than this daemon's limits.max_run_s ({} s); "
                                                           "{} of {} sizes were measured",
                                                           ctx_.limits.max_run_s, index, total),
                                               std::nullopt, false);
                measure(collective_size_key{op, size, ++index}, total);
            }
        for (unsigned q = 0; q < p_; ++q) {
            if (!sessions_[q]) continue;
            try {
                sessions_[q]->send(core::frame_type::bye, json::object(), clock::now() + handshake_timeout);
            } catch (const session_error&) {
                // Everything is measured; a rank that left early loses nothing.
            }
        }
    }

private:
    /// A session with every other rank, holding this daemon's gate; a busy rank is waited
    /// for (everything given back meanwhile, so two coordinators cannot block each other).
    void open_sessions() {
        busy_wait waiter(emit_, cancel_);
        auto wait_busy = [&](const std::string& why) {
            if (!waiter.wait(why)) throw collective_run_error(waiter.gave_up(why), std::nullopt, true);
        };
        while (true) {
            std::string holder;
            lease_ = ctx_.gate.try_acquire("collective run " + r_.id, holder);
            if (!lease_) {
                wait_busy(fmt::format("this daemon is busy ({})", holder));
                continue;
            }
            std::string busy;
            for (unsigned q = 0; q < p_ && busy.empty(); ++q) {
                if (q == me_) continue;
                const auto ep = transport::parse_endpoint(spec_.hosts[q]);
                session_attempt a;
                try {
                    check_run_target(ctx_, spec_.hosts[q]);  // the allow-list, as for a sweep's peer
                    a = try_open_session(ctx_, ep);
                } catch (const core::spec_error& e) {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
                } catch (const session_error& e) {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
                }
                if (a.channel) {
                    sessions_[q].emplace(std::move(*a.channel));
                    guard_session_socket(sessions_[q]->fd());
                } else if (a.busy()) {
                    busy = fmt::format("{} is busy: {}", rank_name(spec_, q), a.why);
                } else {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q),
                                                           refusal_error(ep, a).what()),
                                               q, true);
                }
            }
            if (busy.empty()) return;
            for (auto& s : sessions_) s.reset();
            lease_.release();
            wait_busy(busy);
        }
    }

    /// The plan to every rank; every rank's host facts back.
    void hand_out_plan() {
        expect_.emplace(ctx_, token_, me_, mesh_peers(spec_.ops, algos_of(spec_), p_, me_, spec_.element, spec_.sizes.front()));
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    sessions_[q]->send(core::frame_type::hello,
                                       {{"protocol", session_protocol_version()}, {"version", MESHPERF_VERSION}, {"run_id", r_.id},
                                        {"collective", core::to_json(spec_)}, {"rank", q}, {"token", token_},
                                        {"initiator", core::to_json(ctx_.host)},
                                        {"limits", {{"max_bytes_per_point", ctx_.limits.max_bytes_per_point}}}},
                                       clock::now() + handshake_timeout);
                });
        r_.hosts.assign(p_, core::host_info{});
        r_.hosts[me_] = ctx_.host;
        r_.hosts[me_].address = spec_.hosts[me_];
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    const auto ok = sessions_[q]->receive(clock::now() + handshake_timeout);
                    if (ok.type != core::frame_type::hello_ok) throw session_error("it answered the plan with an unexpected frame");
                    r_.hosts[q] = core::host_info_from_json(ok.body.value("host", json::object()));
                    r_.hosts[q].address = spec_.hosts[q];
                });
    }

    /// Every rank's data connections, this one's included.
    void connect_mesh() {
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] { sessions_[q]->send(core::frame_type::point_go, {{"mesh", true}}, clock::now() + handshake_timeout); });
        try {
            mesh_ = expect_->connect(spec_, clock::now() + streams_timeout);
        } catch (const session_error& e) {
            throw collective_run_error(fmt::format("{} could not connect: {}", rank_name(spec_, me_), e.what()), std::nullopt, true);
        }
        std::vector<std::string> memory(p_);  // how each rank moves device memory (empty: host memory or TCP)
        if (mesh_.rdma) memory[me_] = rdma_memory_note(*mesh_.rdma);
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    const auto ready = sessions_[q]->receive(clock::now() + streams_timeout + handshake_timeout);
                    if (ready.type != core::frame_type::point_ready) throw session_error("it did not confirm its data connections");
                    if (ready.body.is_object() && ready.body.contains("memory") && ready.body["memory"].is_string())
                        memory[q] = ready.body["memory"].get<std::string>().substr(0, 200);
                });
        expect_.reset();
        for (unsigned q = 0; q < p_; ++q)
            if (!memory[q].empty()) r_.warnings.push_back(fmt::format("{}: memory {}: {}", rank_name(spec_, q), spec_.memory, memory[q]));
    }

    /// Runs `step` with rank q's session; a failure there means q could not join.
    template <class Step> void at_start(unsigned q, Step step) {
        try {
            step();
        } catch (const session_error& e) {
            throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
        }
    }

    void measure(const collective_size_key& key, std::size_t total) {
        const auto algo = core::algo_for(spec_, key.op);
        std::vector<rank_outcome> out(p_);
        for (unsigned q = 0; q < p_; ++q) {
            if (q == me_) continue;
            try {
                sessions_[q]->send(core::frame_type::point_begin, to_json(key), clock::now() + handshake_timeout);
            } catch (const session_error& e) {
                out[q] = {rank_outcome::kind::lost, e.what(), std::nullopt, {}};
            }
        }
        bool failed = std::any_of(out.begin(), out.end(), [](const auto& o) { return o.how != rank_outcome::kind::reported; });
        if (!failed) {
            try {
                out[me_].timing = measure_collective_size(core::plan_collective(key.op, algo, p_, me_, spec_.element, key.size),
                                                          mesh_, options_, cancel_);
            } catch (const collective_fault& f) {
                out[me_] = {rank_outcome::kind::fault, fmt::format("{}: {}", rank_name(spec_, me_), f.what()), f.peer, {}};
                failed = true;
            } catch (const run_cancelled&) {
                mesh_.close();  // the other ranks see the connections close and give up
                throw;
            }
        }
        if (failed) mesh_.close();
        // After a fault the other ranks give up within about one stall limit of it, as this one did: a
        // rank that has not reported a few seconds later is frozen or gone.
        const auto deadline = clock::now() + (failed ? std::chrono::seconds(4) : point_done_timeout);
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_ && out[q].how == rank_outcome::kind::reported) out[q] = collect(q, deadline);
        if (std::any_of(out.begin(), out.end(), [](const auto& o) { return o.how != rank_outcome::kind::reported; }))
            fail(key, total, out);
        add_point(key, algo, out);
    }

    rank_outcome collect(unsigned q, clock::time_point deadline) {
        try {
            const auto m = sessions_[q]->try_receive(deadline);
            if (!m) return {rank_outcome::kind::silent, fmt::format("{} sent nothing", rank_name(spec_, q)), std::nullopt, {}};
            if (m->type != core::frame_type::point_done) throw session_error("it sent an unexpected frame instead of its timing");
            return {rank_outcome::kind::reported, {}, std::nullopt,
                    rank_timing_from_json(m->body, ctx_.limits.max_iterations, spec_.verify)};
        } catch (const peer_reported_error& e) {
            std::optional<unsigned> blame;
            if (e.body.contains("blame") && e.body["blame"].is_number_unsigned() && e.body["blame"].get<std::uint64_t>() < p_)
                blame = e.body["blame"].get<unsigned>();
            return {rank_outcome::kind::fault, e.what(), blame, {}};
        } catch (const session_error& e) {
            sessions_[q].reset();
            return {rank_outcome::kind::lost, fmt::format("{}: {}", rank_name(spec_, q), e.what()), std::nullopt, {}};
        }
    }

    [[noreturn]] void fail(const collective_size_key& key, std::size_t total, const std::vector<rank_outcome>& out) {
        const auto who = culprit(out);
        std::string seen;  // the first-hand account: a fault that blames the culprit, else any
        for (const auto& o : out)
            if (o.how == rank_outcome::kind::fault && (seen.empty() || (who && o.blame == who))) seen = o.message;
        std::string what;
        if (who && out[*who].how == rank_outcome::kind::lost)
            what = fmt::format("{} went away (its session ended: its daemon died or its host is unreachable)", rank_name(spec_, *who));
        else if (who && out[*who].how == rank_outcome::kind::silent)
            what = fmt::format("{} stopped answering (its daemon is frozen or its host is unreachable)", rank_name(spec_, *who));
        else if (who)
            what = fmt::format("{} failed", rank_name(spec_, *who));
        else
            what = "the data path failed";
        throw collective_run_error(fmt::format("{} during {} (size {} of {}){}{}; {} of {} sizes were measured", what,
                                               describe(key), key.index, total, seen.empty() ? "" : ": ", seen,
                                               r_.points.size(), total),
                                   who, false);
    }

    void add_point(const collective_size_key& key, core::collective_algo algo, const std::vector<rank_outcome>& out) {
        std::vector<std::vector<double>> iterations(p_), sends;
        std::vector<std::uint64_t> wrong;
        if (algo == core::collective_algo::ring) sends.resize(p_);
        for (unsigned q = 0; q < p_; ++q) {
            iterations[q] = out[q].timing.iteration_s;
            // An incast sender's time is the receiver's: until all its bytes had arrived.
            if (key.op == core::collective_op::incast && q != core::incast_receiver) {
                const auto& from = out[core::incast_receiver].timing.from_sender_s;
                if (q >= from.size() || from[q].size() != iterations[q].size())
                    throw collective_run_error(fmt::format("{}: {} did not time the arrival of {}'s data", describe(key),
                                                           rank_name(spec_, core::incast_receiver), rank_name(spec_, q)),
                                               core::incast_receiver, false);
                iterations[q] = from[q];
            }
            // Ring link q -> q+1 is timed by its receiver, q+1 (collective_engine.hpp, link_in_s).
            if (!sends.empty()) sends[q] = out[(q + 1) % p_].timing.link_in_s;
            if (spec_.verify) wrong.push_back(out[q].timing.wrong.value_or(0));
        }
        // A ring's links are timed together or not at all: a receiver whose messages all came
        // at once timed nothing (rank_timing::link_in_s), and then the point has no links.
        const bool chain = key.op == core::collective_op::broadcast;
        for (unsigned q = 0; q < sends.size(); ++q)
            if (sends[q].empty() && !(chain && q + 1 == p_)) {
                sends.clear();
                if (links_untimed_said_.insert(key.op).second)
                    r_.warnings.push_back(fmt::format("{}: the ring links were not timed: every message came in one piece, too "
                                                      "fast for the receiver to time, so there is no slowest link here (nor at "
                                                      "any other size with '-' in its place); larger sizes, over a real "
                                                      "link rather than loopback, time them",
                                                      describe(key)));
                break;
            }
        auto point = core::assemble_collective_point(key.op, algo, p_, spec_.element, key.size, iterations, sends, wrong);
        if (spec_.iterations && point.iterations < *spec_.iterations)
            r_.warnings.push_back(fmt::format("{}: {} of the {} iterations asked for: this daemon's limits.max_duration_s ({} s) "
                                              "ended the size",
                                              describe(key), point.iterations, *spec_.iterations, ctx_.limits.max_duration_s));
        r_.points.push_back(point);
        emit_({{"event", "point"}, {"index", key.index}, {"total", spec_.ops.size() * spec_.sizes.size()},
               {"point", core::to_json(point)}});
    }

    daemon_context& ctx_;
    std::set<core::collective_op> links_untimed_said_;  // the ops already warned of untimed links
    core::collective_result& r_;
    const core::collective_spec& spec_;
    const event_sink& emit_;
    const std::atomic<bool>& cancel_;
    const unsigned p_;
    const unsigned me_;
    const std::string token_;
    const size_run_options options_;  // this rank's, once per run (its device memory checked once)
    measurement_gate::lease lease_;
    std::vector<std::optional<frame_channel>> sessions_;
    std::optional<mesh_expectation> expect_;
    collective_mesh mesh_;
};

}  // namespace

void execute_collective(daemon_context& ctx, core::collective_result& result, const event_sink& emit,
                        const std::atomic<bool>& cancel) {
    require_collective_memory(result.spec, ctx.collective_hooks, "coordinator");  // the sweeps' error where there is no GPU
    coordinator(ctx, result, emit, cancel).run();
}

}  // namespace meshperf::daemon
