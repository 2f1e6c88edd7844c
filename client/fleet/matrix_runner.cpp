#include "client/fleet/matrix_runner.hpp"

#include "client/support/bounded_parallel.hpp"
#include "client/support/rail_lookup.hpp"
#include "client/support/short_runs.hpp"
#include "core/check_figures.hpp"
#include "core/rail_check.hpp"
#include "transport/socket.hpp"

#include <exception>
#include <fmt/format.h>

namespace meshperf::client {

matrix_runner::matrix_runner(const matrix_settings& o, std::vector<std::string> names, credentials creds,
                             std::size_t idle_connections)
    : o_(o), names_(std::move(names)), creds_(std::move(creds)),
      pool_(std::make_shared<connection_pool>(creds_.tls, idle_connections)), progress_(o.quiet, o.progress),
      links_(names_.size()) {
    for (const auto& n : names_) addrs_.push_back(transport::parse_endpoint(n).to_string());
    down_.assign(names_.size(), false);
}

void matrix_runner::probe_hosts() {
    std::optional<auth_refused> refused;
    for_each_bounded(names_.size(), o_.max_parallel, [&](std::size_t h) {
        try {
            rails_.set_info(h, daemon_client(names_[h], creds_, pool_).get("/v1/info", matrix_probe_timeout));
        } catch (const auth_refused& e) {
            std::lock_guard lock(m_);
            if (!refused) refused = e;
        } catch (const client_error& e) {
            mark_down(h, e.what());
        }
    });
    if (refused) throw *refused;
}

void matrix_runner::run_schedule() {
    const auto n = names_.size();
    const auto rounds = analysis::round_count(n);
    links_.reserve(n * (n - 1));
    for (std::size_t r = 0; r < rounds; ++r) run_round(analysis::schedule_round(n, r), "round", r + 1, rounds, false);
}

std::size_t matrix_runner::retest(const analysis::matrix_analysis& a) {
    const auto pairs = analysis::pairs_to_retest(a);
    retest_links_.clear();
    for (auto i : analysis::links_to_retest(a)) retest_links_.insert({a.links[i].link.from, a.links[i].link.to});
    const auto rounds = analysis::schedule_pairs(pairs);
    for (std::size_t r = 0; r < rounds.size(); ++r) run_round(rounds[r], "retest round", r + 1, rounds.size(), true);
    return rounds.size();
}

void matrix_runner::run_links(const std::vector<analysis::directed_link>& links, const char* what, std::size_t k, std::size_t of,
                              bool retest) {
    progress_.set_unit("links");
    progress_.start(what, k, of, links.size());
    for_each_bounded(links.size(), o_.max_parallel, [&](std::size_t i) {
        measure(links[i].from, links[i].to, retest);
        progress_.job_done();
    });
}

analysis::matrix_analysis matrix_runner::analyze() const {
    analysis::outlier_options opt;
    opt.bandwidth_fraction = o_.bad_bw_fraction;
    opt.latency_multiple = o_.bad_lat_multiple;
    opt.suspect_fraction = o_.suspect_fraction;
    std::vector<std::size_t> down;
    for (std::size_t h = 0; h < down_.size(); ++h)
        if (down_[h]) down.push_back(h);
    return analysis::analyze_link_source(names_.size(), links_.source(), opt, down);
}

std::optional<analysis::rail_fleet_verdict> matrix_runner::judge_rails(const std::optional<topology>& topo) const {
    if (!o_.rails.given || rail_cells_.empty()) return std::nullopt;
    if (!topo) return analysis::judge_rail_planes(rail_cells_, names_.size(), o_.bad_bw_fraction, o_.suspect_fraction);
    return analysis::judge_rail_planes(rail_cells_, names_.size(), o_.bad_bw_fraction, o_.suspect_fraction, topo->group_of,
                                       topo->group_names.size());
}

void matrix_runner::mark_down(std::size_t h, const std::string& why) {
    std::lock_guard lock(m_);
    if (!down_[h]) down_why_.emplace(h, why);
    down_[h] = true;
}

/// After a run to `h` failed: a peer that does not answer /v1/info within
/// matrix_probe_timeout is frozen or gone, and marked down now, so its other pairs are not
/// measured (each would wait out the session's timeouts).
void matrix_runner::probe_peer(std::size_t h) {
    if (is_down(h)) return;
    try {
        daemon_client(names_[h], creds_, pool_).get("/v1/info", matrix_probe_timeout);
    } catch (const client_error& e) {
        if (e.code() == exit_unreachable) mark_down(h, e.what());
    }
}

bool matrix_runner::is_down(std::size_t h) {
    std::lock_guard lock(m_);
    return down_[h];
}

void matrix_runner::run_round(const std::vector<analysis::host_pair>& pairs, const char* what, std::size_t k, std::size_t of,
                              bool retest) {
    progress_.start(what, k, of, pairs.size());
    // At most max_parallel pairs at once: a round with more runs in waves.
    for_each_bounded(pairs.size(), o_.max_parallel, [&](std::size_t i) {
        for (const auto& d : analysis::measurement_order(pairs[i])) {
            if (retest && !retest_links_.count({d.from, d.to})) continue;
            measure(d.from, d.to, retest);
        }
        progress_.job_done();
    });
}

/// `s` could not be measured, because of `why`.
void matrix_runner::fail(analysis::link_sample& s, std::string why) {
    s.reachable = false;
    s.error = std::move(why);
}

/// Measures from → to (unless either end is down) and stores its figures; the runs'
/// results end here: only the figures are kept.
void matrix_runner::measure(std::size_t from, std::size_t to, bool retest) {
    link_reading l;
    l.sample.from = from;
    l.sample.to = to;
    if (is_down(from)) {
        std::lock_guard lock(m_);
        fail(l.sample, fmt::format("not measured: {}", down_why_[from]));  // the reason names the host
    } else if (is_down(to)) {
        std::lock_guard lock(m_);
        fail(l.sample, fmt::format("not measured: {}", down_why_[to]));
    } else {
        const auto runs = run_link(from, to, l);
        if (l.sample.reachable) judge_link(from, to, runs, l);
    }
    std::lock_guard lock(m_);
    if (links_.put(l.sample, l.run_ids, retest) && !l.rails.empty()) rail_cells_.put(from, to, l.rails, retest);
}

/// The short runs of from → to, over its rails with --rails, until one does not complete:
/// that one makes the link unreachable (and its initiator, or a peer that no longer
/// answers, down). Returns the runs that completed.
std::vector<core::run_result> matrix_runner::run_link(std::size_t from, std::size_t to, link_reading& l) {
    std::vector<core::run_result> runs;
    try {
        const daemon_client initiator(names_[from], creds_, pool_);
        const auto rails = rails_.of(from, to, l.sample.rail_problems);
        for (const auto& spec : specs_with_rails(short_test_specs(addrs_[to], o_.test), rails, o_.rails.serial)) {
            auto out = run_to_completion(initiator, spec);
            if (!out.run.id.empty()) l.run_ids.push_back(out.run.id);
            if (!out.completed) {
                if (out.initiator_unreachable) mark_down(from, out.error);
                else probe_peer(to);
                fail(l.sample, std::move(out.error));
                break;
            }
            runs.push_back(std::move(out.run));
        }
    } catch (const std::exception& e) {
        fail(l.sample, e.what());
    }
    return runs;
}

/// The figures of a link whose runs completed: latency and bandwidth, the counters' and the
/// rails' problems, and with --rails each rail's reading.
void matrix_runner::judge_link(std::size_t from, std::size_t to, const std::vector<core::run_result>& runs, link_reading& l) {
    const auto f = summarize_link(runs);
    l.sample.gbit_per_s = f.gbit_per_s;
    l.sample.lat_us = f.lat_us;
    if (!o_.ignore_counters)
        for (const auto& run : runs)
            for (auto& c : core::counter_verdicts_of(run)) l.sample.counter_problems.push_back(std::move(c.text));
    bool unknown_rate = false;
    std::vector<core::rail_problem> problems;
    for (const auto& run : runs)
        for (auto& p : core::rail_link_problems(run, names_[from], names_[to], o_.min_rate_fraction, unknown_rate))
            problems.push_back(std::move(p));
    if (o_.min_rate_fraction == 0 && o_.rails.given)
        for (auto& p : core::rail_sibling_problems(runs, names_[from], names_[to], o_.bad_bw_fraction)) problems.push_back(std::move(p));
    for (auto& p : problems) l.sample.rail_problems.push_back(std::move(p.text));
    if (o_.rails.given) l.rails = rail_observations(core::rail_readings(runs), problems);
    if (unknown_rate)
        rails_.say_once("--min-rate-fraction: some rails' link rate is unknown (neither end's /v1/info has one), so they are "
                        "judged only for moving bytes: give --expect node.toml with rail_rate_gbit");
    if (!f.gbit_per_s && !f.lat_us) {
        fail(l.sample, "the runs completed without a latency or bandwidth figure");
    }
}

}  // namespace meshperf::client
