#include "daemon/collective/size_loop.hpp"

#include "core/counter_verdicts.hpp"

#include "daemon/collective/wire.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
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

class size_loop {
public:
    size_loop(const size_loop_setup& setup, core::collective_result& result, const event_sink& emit,
              const std::atomic<bool>& cancel)
        : s_(setup), r_(result), spec_(result.spec), emit_(emit), cancel_(cancel),
          p_(static_cast<unsigned>(spec_.hosts.size())) {}

    void run() {
        const auto started = clock::now();
        const std::size_t total = spec_.ops.size() * spec_.sizes.size();
        std::size_t index = 0;
        for (auto op : spec_.ops)
            for (auto size : spec_.sizes) {
                if (cancel_.load()) throw run_cancelled();
                if (std::chrono::duration<double>(clock::now() - started).count() > s_.limits.max_run_s)
                    throw collective_run_error(fmt::format("the run took longer than this daemon's limits.max_run_s ({} s); "
                                                           "{} of {} sizes were measured",
                                                           s_.limits.max_run_s, index, total),
                                               std::nullopt, false);
                measure(collective_size_key{op, size, ++index}, total);
            }
    }

private:
    void measure(const collective_size_key& key, std::size_t total) {
        const auto algo = core::algo_for(spec_, key.op);
        std::vector<rank_outcome> out(p_);
        for (unsigned q = 0; q < p_; ++q) {
            if (q == s_.me) continue;
            try {
                s_.sessions[q]->send(core::frame_type::point_begin, to_json(key), clock::now() + handshake_timeout);
            } catch (const session_error& e) {
                out[q] = {rank_outcome::kind::lost, e.what(), std::nullopt, {}};
            }
        }
        bool failed = std::any_of(out.begin(), out.end(), [](const auto& o) { return o.how != rank_outcome::kind::reported; });
        if (!failed) {
            try {
                out[s_.me].timing = measure_collective_size(core::plan_collective(key.op, algo, p_, s_.me, spec_.element, key.size),
                                                          s_.mesh, s_.options, cancel_);
            } catch (const collective_fault& f) {
                out[s_.me] = {rank_outcome::kind::fault, fmt::format("{}: {}", rank_name(spec_, s_.me), f.what()), f.peer, {}};
                failed = true;
            } catch (const run_cancelled&) {
                s_.mesh.close();  // the other ranks see the connections close and give up
                throw;
            }
        }
        if (failed) s_.mesh.close();
        // After a fault the other ranks give up within about one stall limit of it, as this one did: a
        // rank that has not reported a few seconds later is frozen or gone.
        const auto deadline = clock::now() + (failed ? std::chrono::seconds(4) : point_done_timeout);
        for (unsigned q = 0; q < p_; ++q)
            if (q != s_.me && out[q].how == rank_outcome::kind::reported) out[q] = collect(q, deadline);
        if (std::any_of(out.begin(), out.end(), [](const auto& o) { return o.how != rank_outcome::kind::reported; }))
            fail(key, total, out);
        add_point(key, algo, out);
    }

    rank_outcome collect(unsigned q, clock::time_point deadline) {
        try {
            const auto m = s_.sessions[q]->try_receive(deadline);
            if (!m) return {rank_outcome::kind::silent, fmt::format("{} sent nothing", rank_name(spec_, q)), std::nullopt, {}};
            if (m->type != core::frame_type::point_done) throw session_error("it sent an unexpected frame instead of its timing");
            return {rank_outcome::kind::reported, {}, std::nullopt,
                    rank_timing_from_json(m->body, s_.limits.max_iterations, spec_.verify)};
        } catch (const peer_reported_error& e) {
            std::optional<unsigned> blame;
            if (e.body.contains("blame") && e.body["blame"].is_number_unsigned() && e.body["blame"].get<std::uint64_t>() < p_)
                blame = e.body["blame"].get<unsigned>();
            return {rank_outcome::kind::fault, e.what(), blame, {}};
        } catch (const session_error& e) {
            s_.sessions[q].reset();
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
            // Ring link q -> q+1 is timed by its receiver, q+1 (daemon/collective/engine.hpp, link_in_s).
            if (!sends.empty()) sends[q] = out[(q + 1) % p_].timing.link_in_s;
            if (spec_.verify) wrong.push_back(out[q].timing.wrong.value_or(0));
        }
        // A ring's links are timed together or not at all: a receiver whose messages all came
        // at once timed nothing (rank_timing::link_in_s), and then the point has no links.
        const bool chain = core::op_traits(key.op).ring_is_chain;
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
                                              describe(key), point.iterations, *spec_.iterations, s_.limits.max_duration_s));
        for (unsigned q = 0; q < p_; ++q) point.rank_counters.push_back(out[q].timing.link_counters);
        if (std::any_of(out.begin(), out.end(), [](const auto& o) { return o.timing.send_tcp.has_value(); }))
            for (unsigned q = 0; q < p_; ++q) point.rank_tcp_counters.push_back(out[q].timing.send_tcp);
        core::attach_link_tcp_counts(point);
        warn_of_counters(key, point);
        warn_of_retransmits(key, point);
        r_.points.push_back(point);
        emit_({{"event", "point"}, {"index", key.index}, {"total", spec_.ops.size() * spec_.sizes.size()},
               {"point", core::to_json(point)}});
    }

    /// A run warning for each rank whose NIC counted errors during the size (core/counter_verdicts.hpp),
    /// saying so when the rank is an end of the slowest link.
    void warn_of_counters(const collective_size_key& key, const core::collective_point& point) {
        for (unsigned q = 0; q < point.rank_counters.size(); ++q) {
            if (!point.rank_counters[q]) continue;
            const auto findings = core::judge_link_counters({point.rank_counters[q], std::nullopt});
            if (findings.empty()) continue;
            std::vector<std::string> reasons;
            for (const auto& f : findings) reasons.push_back(f.reason);
            std::string slowest;
            if (point.slowest_link && (point.slowest_link->from == q || point.slowest_link->to == q))
                slowest = fmt::format(" (an end of the slowest link, {})", slowest_link_text(*point.slowest_link));
            r_.warnings.push_back(fmt::format("{}: {} {}: {} during the size{}", describe(key), rank_name(spec_, q),
                                              findings.front().where, fmt::join(reasons, ", "), slowest));
        }
    }

    /// "rank 2 -> rank 3", with its TCP retransmits where its sender read them.
    static std::string slowest_link_text(const core::collective_link& l) {
        if (!l.retransmits || !l.segments_sent) return core::to_string(l);
        return fmt::format("{}, {} of its {} TCP segments retransmitted", core::to_string(l), *l.retransmits, *l.segments_sent);
    }

    /// A run warning for each rank whose sending sockets retransmitted more than
    /// core::retransmit_warning_share of their segments during the size, naming the link
    /// (a ring's rank -> right neighbour) and saying so when it is the slowest link.
    void warn_of_retransmits(const collective_size_key& key, const core::collective_point& point) {
        for (unsigned q = 0; q < point.rank_tcp_counters.size(); ++q) {
            const auto& c = point.rank_tcp_counters[q];
            if (!c) continue;
            const auto warning = core::retransmit_warning(*c);
            if (!warning) continue;
            std::string where;
            if (point.algo == core::collective_algo::ring) {
                const unsigned right = (q + 1) % p_;
                const bool slowest = point.slowest_link && point.slowest_link->from == q;
                where = fmt::format("{} sending to {} (link rank {} -> rank {}{})", rank_name(spec_, q), rank_name(spec_, right), q,
                                    right, slowest ? ", the slowest link" : "");
            } else {
                where = fmt::format("{} over the sockets it sends data on", rank_name(spec_, q));
            }
            r_.warnings.push_back(fmt::format("{}: {}: {}", describe(key), where, *warning));
        }
    }

    const size_loop_setup& s_;  // limits, this rank, the sessions, the mesh, the options
    std::set<core::collective_op> links_untimed_said_;  // the ops already warned of untimed links
    core::collective_result& r_;
    const core::collective_spec& spec_;
    const event_sink& emit_;
    const std::atomic<bool>& cancel_;
    const unsigned p_;
};

}  // namespace

void measure_all_sizes(const size_loop_setup& setup, core::collective_result& result, const event_sink& emit,
                       const std::atomic<bool>& cancel) {
    size_loop(setup, result, emit, cancel).run();
}

}  // namespace meshperf::daemon
