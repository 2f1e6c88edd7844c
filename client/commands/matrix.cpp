// meshperf matrix: every ordered pair of a list of hosts, in rounds of disjoint pairs
// (analysis/matrix_schedule), judged with robust outlier rules (analysis/outliers); bad links are
// retested once before they are reported. --mode triage: a few shift rounds instead
// (analysis/triage_schedule), then localisation of what read bad against healthy hosts;
// --topology groups the hosts so that a slow uplink is told from its hosts
// (analysis/triage_verdict). --rails: every link over all its rails at once, each rail
// judged too (a bad one named host rail -> host rail). Exit: 0 all links good, 1 bad links or unreachable hosts,
// 2 usage, 3 no link could be measured at all.
#include "client/support/bounded_parallel.hpp"
#include "client/support/output_format.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/render/matrix_json.hpp"
#include "client/render/matrix_text.hpp"
#include "client/support/open_files.hpp"
#include "client/support/progress.hpp"
#include "client/support/rail_lookup.hpp"
#include "client/render/table.hpp"
#include "client/support/short_runs.hpp"
#include "core/check_figures.hpp"
#include "core/error.hpp"
#include "core/figure_text.hpp"
#include "core/rail_check.hpp"
#include "node/manifest.hpp"
#include "analysis/link_store.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/matrix_schedule.hpp"
#include "analysis/outliers.hpp"
#include "analysis/triage_schedule.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/support/topology_file.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// How long a daemon may take to answer the matrix's /v1/info probe (before the rounds, and
/// of a peer after a failed run) before it is marked down: a live daemon answers in
/// milliseconds; a frozen one (SIGSTOP) accepts the connection and says nothing.
constexpr std::chrono::seconds matrix_probe_timeout{5};

struct matrix_options {
    std::string hosts;
    short_test_options test;
    output_format format = output_format::table;
    std::string output;
    double bad_bw_fraction = 0.9;
    double bad_lat_multiple = 2.0;
    double suspect_fraction = 0.5;
    bool no_retest = false;
    bool ignore_counters = false;  ///< --ignore-counters: links judged by their figures only
    bool quiet = false;     ///< -q, --no-progress
    bool progress = false;  ///< --progress: also when stderr is not a terminal (plain lines)
    std::size_t max_parallel = 64;  ///< pairs measured (and daemons probed) at once; without --parallel: every pair of a round
                                    ///< (triage: link of a wave) at once, within the open-file limit
    bool parallel_given = false;
    std::string mode = "full";      ///< full: every ordered pair; triage: shift rounds, then localisation
    std::string topology;           ///< --topology FILE (empty: none)
    std::string group_by;           ///< --group-by KEY (empty: the file's first label)
    rail_options rails;             ///< --rails, --rail-map, --rails-serial: every link over these rails
    double min_rate_fraction = 0;   ///< --min-rate-fraction: each rail against this share of its link rate (0: not judged)
    std::string expect_file;        ///< --expect node.toml
    std::optional<double> rail_rate_gbit;  ///< its rail_rate_gbit: every rail's rate
};

/// The progress display of one phase (rounds, retest rounds, localisation rounds): on a
/// terminal one line rewritten in place; with --progress in a log, a plain line per event.
/// Both with the share of this phase done and the time left.
class phase_progress {
public:
    phase_progress(bool quiet, bool progress) {
        const bool terminal = ::isatty(STDERR_FILENO) != 0;
        tty_ = terminal && (progress || !quiet);
        log_ = !terminal && progress;
    }
    /// Starts step k (1-based) of `of` with `total` jobs; k == 1 starts the phase's clock.
    void start(const char* what, std::size_t k, std::size_t of, std::size_t total) {
        if (k == 1) started_ = std::chrono::steady_clock::now();
        what_ = what, k_ = k, of_ = of, total_ = total, done_ = 0;
        show();
    }
    void job_done() {
        ++done_;
        show();
    }
    /// What the jobs are called in the line: "pairs" (the default) or "links".
    void set_unit(const char* unit) { unit_ = unit; }
    void end() const {
        if (tty_) std::fprintf(stderr, "\r\033[K");
    }

private:
    void show() {
        if (!tty_ && !log_) return;
        std::lock_guard lock(m_);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        const auto text = phase_progress_line(what_, k_, of_, unit_, done_.load(), total_, elapsed);
        if (tty_) std::fprintf(stderr, "\r\033[K%s", text.c_str());
        else std::fprintf(stderr, "%s\n", text.c_str());
        std::fflush(stderr);
    }

    const char* unit_ = "pairs";  // what the jobs are: pairs (full), links (triage)
    bool tty_ = false, log_ = false;
    std::mutex m_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    const char* what_ = "";
    std::size_t k_ = 0, of_ = 0, total_ = 0;
    std::atomic<std::size_t> done_{0};
};

/// A link's rail readings for the planes' verdict, each marked bad when one of `problems`
/// (any rule's) is about it.
std::vector<analysis::rail_observation> rail_observations(const std::vector<core::rail_reading>& readings,
                                                          const std::vector<core::rail_problem>& problems) {
    std::vector<analysis::rail_observation> out;
    for (const auto& r : readings) {
        const bool bad = r.failed || std::any_of(problems.begin(), problems.end(), [&](const auto& p) { return p.rail == r.name; });
        out.push_back({r.name, r.peer_name, r.gbit_per_s, r.rate_fraction, bad});
    }
    return out;
}

/// --rails of a matrix: the rails of each link matched from its two daemons' GET /v1/info
/// (read once per host, by the runner's probe), with --expect's rate on each; the notes of
/// the matching said once, not once per link.
class matrix_rails {
public:
    matrix_rails(const matrix_options& o, const std::vector<std::string>& names)
        : o_(o), names_(names), infos_(names.size()), addresses_(names.size()) {}

    /// Keeps host h's /v1/info.
    void set_info(std::size_t h, json info) {
        // The addresses the CLI reaches the daemon by: a rail on one of them is the control network.
        auto addresses = o_.rails.given ? transport::numeric_addresses(transport::parse_endpoint(names_[h]).host)
                                        : std::vector<std::string>{};
        std::lock_guard lock(m_);
        infos_[h] = std::move(info);
        addresses_[h] = std::move(addresses);
    }
    /// The rails of from → to (none without --rails). Rails that cannot be paired are the
    /// link's problem (`problems`), and the link is then measured without rails.
    std::vector<core::rail_pair> of(std::size_t from, std::size_t to, std::vector<std::string>& problems) {
        if (!o_.rails.given) return {};
        rail_matching m;
        try {
            std::lock_guard lock(m_);
            std::vector<std::string> control_notes;
            const auto from_rails =
                without_control_rails(rails_in_info(infos_[from]), o_.rails.request, addresses_[from], names_[from], control_notes);
            const auto to_rails =
                without_control_rails(rails_in_info(infos_[to]), o_.rails.request, addresses_[to], names_[to], control_notes);
            m = match_rails(from_rails, to_rails, o_.rails.request, names_[from], names_[to]);
            m.notes.insert(m.notes.begin(), control_notes.begin(), control_notes.end());
        } catch (const core::spec_error& e) {
            problems.push_back(fmt::format("{} -> {}: the rails cannot be paired, so the link was measured without them: {}",
                                           names_[from], names_[to], e.what()));
            return {};
        }
        for (const auto& n : m.notes) say_once(n);
        if (o_.rail_rate_gbit)
            for (auto& r : m.rails) r.rate_gbit = *o_.rail_rate_gbit;
        return m.rails;
    }
    /// Says `note` on stderr unless it was said before.
    void say_once(const std::string& note) {
        std::lock_guard lock(m_);
        if (said_.insert(note).second) std::fprintf(stderr, "matrix: %s\n", note.c_str());
    }

private:
    const matrix_options& o_;
    const std::vector<std::string>& names_;
    std::mutex m_;
    std::vector<json> infos_;     // each daemon's GET /v1/info (null: it did not answer)
    std::vector<std::vector<std::string>> addresses_;  // each daemon's numeric addresses, as the CLI reaches it
    std::set<std::string> said_;  // the notes already said
};

class matrix_runner {
public:
    /// Keeps up to `idle_connections` connections to daemons open between calls, so every
    /// round reuses them (one connect and TLS handshake per daemon, not per link).
    matrix_runner(const matrix_options& o, std::vector<std::string> names, credentials creds, std::size_t idle_connections)
        : o_(o), names_(std::move(names)), creds_(std::move(creds)),
          pool_(std::make_shared<connection_pool>(creds_.tls, idle_connections)), progress_(o.quiet, o.progress),
          links_(names_.size()) {
        for (const auto& n : names_) addrs_.push_back(transport::parse_endpoint(n).to_string());
        down_.assign(names_.size(), false);
    }

    /// Asks every daemon for /v1/info at once (each within matrix_probe_timeout); those that
    /// do not answer are down from the start. Refused credentials end the matrix: throws the
    /// first auth_refused (every daemon would refuse the same token).
    void probe_hosts() {
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

    void run_schedule() {
        const auto n = names_.size();
        const auto rounds = analysis::round_count(n);
        links_.reserve(n * (n - 1));
        for (std::size_t r = 0; r < rounds; ++r) run_round(analysis::schedule_round(n, r), "round", r + 1, rounds, false);
    }

    /// Retests the reachable bad links once; returns how many rounds that took.
    std::size_t retest(const analysis::matrix_analysis& a) {
        const auto pairs = analysis::pairs_to_retest(a);
        retest_links_.clear();
        for (auto i : analysis::links_to_retest(a)) retest_links_.insert({a.links[i].link.from, a.links[i].link.to});
        const auto rounds = analysis::schedule_pairs(pairs);
        for (std::size_t r = 0; r < rounds.size(); ++r) run_round(rounds[r], "retest round", r + 1, rounds.size(), true);
        return rounds.size();
    }

    analysis::matrix_analysis analyze() const {
        analysis::outlier_options opt;
        opt.bandwidth_fraction = o_.bad_bw_fraction;
        opt.latency_multiple = o_.bad_lat_multiple;
        opt.suspect_fraction = o_.suspect_fraction;
        std::vector<std::size_t> down;
        for (std::size_t h = 0; h < down_.size(); ++h)
            if (down_[h]) down.push_back(h);
        return analysis::analyze_link_source(names_.size(), links_.source(), opt, down);
    }

    /// With --rails, the rails across the matrix (analysis/rail_planes), with the hosts'
    /// groups when `topo` is given (rail uplinks); empty otherwise.
    std::optional<analysis::rail_fleet_verdict> judge_rails(const std::optional<topology>& topo) const {
        if (!o_.rails.given || rail_cells_.empty()) return std::nullopt;
        if (!topo) return analysis::judge_rail_planes(rail_cells_, names_.size(), o_.bad_bw_fraction, o_.suspect_fraction);
        return analysis::judge_rail_planes(rail_cells_, names_.size(), o_.bad_bw_fraction, o_.suspect_fraction, topo->group_of,
                                           topo->group_names.size());
    }

    /// The links measured, compact (analysis/link_store).
    const analysis::link_store& links() const { return links_; }
    const std::vector<std::string>& names() const { return names_; }
    std::size_t measured_links() const { return links_.reachable(); }
    void end_progress() const { progress_.end(); }
    /// The connections to daemons opened and the requests sent over them so far.
    connection_pool::totals connections() const { return pool_->counts(); }

    /// Measures `links` (disjoint: no host in two) all at once, at most max_parallel at a
    /// time, as step k of `of` of the phase `what`; with `retest` each replaces the link's
    /// earlier figures.
    void run_links(const std::vector<analysis::directed_link>& links, const char* what, std::size_t k, std::size_t of, bool retest) {
        progress_.set_unit("links");
        progress_.start(what, k, of, links.size());
        for_each_bounded(links.size(), o_.max_parallel, [&](std::size_t i) {
            measure(links[i].from, links[i].to, retest);
            progress_.job_done();
        });
    }

private:
    void mark_down(std::size_t h, const std::string& why) {
        std::lock_guard lock(m_);
        if (!down_[h]) down_why_.emplace(h, why);
        down_[h] = true;
    }
    /// After a run to `h` failed: a peer that does not answer /v1/info within
    /// matrix_probe_timeout is frozen or gone, and marked down now, so its other pairs are
    /// not measured (each would wait out the session's timeouts).
    void probe_peer(std::size_t h) {
        if (is_down(h)) return;
        try {
            daemon_client(names_[h], creds_, pool_).get("/v1/info", matrix_probe_timeout);
        } catch (const client_error& e) {
            if (e.code() == exit_unreachable) mark_down(h, e.what());
        }
    }
    bool is_down(std::size_t h) {
        std::lock_guard lock(m_);
        return down_[h];
    }

    void run_round(const std::vector<analysis::host_pair>& pairs, const char* what, std::size_t k, std::size_t of, bool retest) {
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

    void measure(std::size_t from, std::size_t to, bool retest) {
        struct {
            analysis::link_sample sample;
            std::vector<std::string> run_ids;
            std::vector<analysis::rail_observation> rails;  // with --rails, for the planes' verdict
        } l;
        l.sample.from = from;
        l.sample.to = to;
        auto fail = [&](std::string why) {
            l.sample.reachable = false;
            l.sample.error = std::move(why);
        };
        if (is_down(from)) {
            std::lock_guard lock(m_);
            fail(fmt::format("not measured: {}", down_why_[from]));  // the reason names the host
        } else if (is_down(to)) {
            std::lock_guard lock(m_);
            fail(fmt::format("not measured: {}", down_why_[to]));
        } else {
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
                        fail(out.error);
                        break;
                    }
                    runs.push_back(std::move(out.run));
                }
            } catch (const std::exception& e) {
                fail(e.what());
            }
            if (l.sample.reachable) {
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
                    for (auto& p : core::rail_sibling_problems(runs, names_[from], names_[to], o_.bad_bw_fraction))
                        problems.push_back(std::move(p));
                for (auto& p : problems) l.sample.rail_problems.push_back(std::move(p.text));
                if (o_.rails.given) l.rails = rail_observations(core::rail_readings(runs), problems);
                if (unknown_rate)
                    rails_.say_once("--min-rate-fraction: some rails' link rate is unknown (neither end's /v1/info has one), so they are "
                             "judged only for moving bytes: give --expect node.toml with rail_rate_gbit");
                if (!f.gbit_per_s && !f.lat_us) fail("the runs completed without a latency or bandwidth figure");
            }
        }
        std::lock_guard lock(m_);
        // The runs' results end here: only the figures are kept.
        if (links_.put(l.sample, l.run_ids, retest) && !l.rails.empty()) rail_cells_.put(from, to, l.rails, retest);
    }

    const matrix_options& o_;
    std::vector<std::string> names_;  // as given
    std::vector<std::string> addrs_;  // normalised host:port, as the initiating daemon reaches them
    credentials creds_;
    std::shared_ptr<connection_pool> pool_;
    matrix_rails rails_{o_, names_};
    phase_progress progress_;
    std::mutex m_;
    std::vector<bool> down_;
    std::map<std::size_t, std::string> down_why_;
    analysis::link_store links_;
    analysis::rail_cells rail_cells_;
    std::set<std::pair<std::size_t, std::size_t>> retest_links_;
};

std::string fixed(std::optional<double> v, int digits) { return v ? fmt::format("{:.{}f}", *v, digits) : "-"; }

/// What the renderers need: the document's parts and the runner's count of measured links.
struct matrix_view {
    const matrix_runner& m;
    matrix_document doc;
    const analysis::rail_fleet_verdict* rails = nullptr;  ///< with --rails
};

std::string render_summary(const matrix_view& w) {
    const auto& m = w.m;
    const auto& [names_span, a, links, meta, groups, topo] = w.doc;
    const auto& names = m.names();
    std::string out;
    if (meta.value("mode", "full") == "triage")
        out = fmt::format("matrix (triage): {} hosts, {} of {} directed links measured in {} shift rounds ({} waves) + {} "
                          "localisation rounds, {:.1f} s\n",
                          names.size(), m.measured_links(), a.links.size(), meta.value("rounds", 0), meta.value("waves", 0),
                          meta.value("retest_rounds", 0), meta.value("wall_s", 0.0));
    else
        out = fmt::format("matrix: {} hosts, {} of {} directed links measured in {} rounds (+{} retest rounds), {:.1f} s\n",
                          names.size(), m.measured_links(), a.links.size(), meta.value("rounds", 0), meta.value("retest_rounds", 0),
                          meta.value("wall_s", 0.0));
    out += matrix_reference_text(a);
    std::vector<std::string> bad, unreachable;
    std::vector<std::size_t> bad_indices;
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& v = a.links[i];
        if (!v.bad) continue;
        const auto line = fmt::format("  {} -> {}: {}{}{}", names[v.link.from], names[v.link.to],
                                      v.link.reachable ? v.reason : "unreachable: " + v.link.error,
                                      links.retested(i) ? retest_note(v, links.first(i), a) : "",
                                      groups && v.link.reachable ? cause_note(*groups, i, names, topo) : "");
        (v.link.reachable ? bad : unreachable).push_back(line);
        if (v.link.reachable) bad_indices.push_back(i);
    }
    out += bad_links_heading(bad.size(), groups, bad_indices);
    for (const auto& l : bad) out += l + "\n";
    if (!unreachable.empty()) {
        out += fmt::format("unmeasured links: {}\n", unreachable.size());
        for (const auto& l : unreachable) out += l + "\n";
    }
    auto list = [&](const std::vector<std::size_t>& hs) {
        std::string s;
        for (auto h : hs) s += (s.empty() ? "" : ", ") + names[h];
        return s.empty() ? std::string("none") : s;
    };
    if (groups && topo) out += uplink_lines(*groups, *topo);
    if (w.rails) {
        const auto lines = analysis::describe(*w.rails, names, topo ? std::span<const std::string>(topo->group_names)
                                                                     : std::span<const std::string>{});
        out += lines.empty() ? std::string("rail planes and rails: none slow\n") : std::string("rail planes and rails:\n");
        for (const auto& l : lines) out += "  " + l + "\n";
    }
    out += fmt::format("suspect hosts: {}\n", list(a.suspects));
    out += fmt::format("unreachable hosts: {}\n", list(a.unreachable));
    return out;
}

std::string render_table(const matrix_view& w) {
    const auto& names = w.m.names();
    const auto n = names.size();
    std::string out;
    if (n <= 32) {
        // Matrices: row = from (initiator, sender), column = to.
        std::vector<const analysis::link_verdict*> at(n * n, nullptr);
        for (const auto& v : w.doc.a.links) at[v.link.from * n + v.link.to] = &v;
        auto grid = [&](const char* title, auto cell) {
            std::vector<std::vector<std::string>> rows;
            std::vector<std::string> head{"from \\ to"};
            for (std::size_t j = 0; j < n; ++j) head.push_back(fmt::format("[{}]", j + 1));
            rows.push_back(head);
            for (std::size_t i = 0; i < n; ++i) {
                std::vector<std::string> row{fmt::format("[{}] {}", i + 1, names[i])};
                for (std::size_t j = 0; j < n; ++j) {
                    const auto* v = at[i * n + j];
                    row.push_back(i == j ? "." : !v ? "?" : !v->link.reachable ? "x" : cell(*v));
                }
                rows.push_back(row);
            }
            out += std::string(title) + "\n" + format_table(rows) + "\n";
        };
        grid("bandwidth, Gbit/s (row: from = sender, column: to; * bad, x unreachable)",
             [](const analysis::link_verdict& v) { return matrix_cell(fixed(v.link.gbit_per_s, 3), v, matrix_figure::bandwidth); });
        grid("latency, us one-way (p50; * bad)",
             [](const analysis::link_verdict& v) { return matrix_cell(fixed(v.link.lat_us, 1), v, matrix_figure::latency); });
    }
    if (w.doc.groups && w.doc.topo) out += group_pair_table(*w.doc.groups, *w.doc.topo);
    return out + render_summary(w);
}

/// What a triage ran.
struct triage_run {
    std::size_t shift_rounds = 0;
    std::size_t waves = 0;
    std::size_t localisation_rounds = 0;
    json rounds = json::array();  ///< {kind, shift, links, waves} per shift round
};

analysis::group_verdict judge(const analysis::matrix_analysis& a, const std::optional<topology>& t,
                              const std::vector<analysis::link_cause>& aside = {}) {
    return t ? analysis::judge_groups(a, t->group_of, t->group_names.size(), aside) : analysis::judge_without_groups(a, aside);
}

/// The links of `a` the rails explain (rail_planes rule 4), with their cause: bad for rails
/// alone, every bad rail on a slow plane or across a slow rail uplink. Empty when there are none.
std::vector<analysis::link_cause> links_the_rails_explain(const analysis::matrix_analysis& a,
                                                          const analysis::rail_fleet_verdict& r) {
    std::vector<analysis::link_cause> aside;
    if (r.explained.empty()) return aside;
    aside.assign(a.links.size(), analysis::link_cause::none);
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& v = a.links[i];
        if (!(v.bad && v.link.reachable && v.rails_bad && !v.bandwidth_bad && !v.latency_bad && !v.counters_bad)) continue;
        switch (r.explanation(v.link.from, v.link.to)) {
            case analysis::rail_explanation::plane: aside[i] = analysis::link_cause::rail_plane; break;
            case analysis::rail_explanation::uplink: aside[i] = analysis::link_cause::rail_uplink; break;
            case analysis::rail_explanation::none: break;
        }
    }
    return aside;
}

/// The shift rounds, each in waves of disjoint links; then, unless --no-retest, the
/// localisation rounds of what read bad, against hosts that read healthy.
triage_run run_triage(matrix_runner& m, const std::optional<topology>& topo, bool no_retest) {
    const std::size_t n = m.names().size();
    const std::vector<std::size_t> group_of = topo ? topo->group_of : std::vector<std::size_t>{};
    triage_run run;
    const auto rounds = analysis::triage_schedule(n, group_of);
    std::vector<std::vector<analysis::directed_link>> waves;
    for (const auto& r : rounds) {
        auto w = analysis::triage_waves(n, r.links);
        run.rounds.push_back({{"kind", analysis::to_string(r.kind)}, {"shift", r.shift}, {"links", r.links.size()}, {"waves", w.size()}});
        for (auto& x : w) waves.push_back(std::move(x));
    }
    run.shift_rounds = rounds.size();
    run.waves = waves.size();
    for (std::size_t k = 0; k < waves.size(); ++k) m.run_links(waves[k], "shift-round wave", k + 1, waves.size(), false);
    if (no_retest) return run;
    const auto first = m.analyze();
    const auto more = analysis::localisation_links(analysis::localisation_request(first, judge(first, topo), group_of));
    const auto local = analysis::triage_waves(n, more);
    for (std::size_t k = 0; k < local.size(); ++k) m.run_links(local[k], "localisation round", k + 1, local.size(), true);
    // A partner test that read bad, and that no host or uplink explains, is measured once
    // more before it is reported, as every bad link of the shift rounds was.
    const auto second = m.analyze();
    const auto causes = judge(second, topo);
    std::vector<analysis::directed_link> again;
    for (std::size_t i = 0; i < second.links.size(); ++i) {
        const auto& l = second.links[i];
        if (l.bad && l.link.reachable && !m.links().retested(i) && causes.cause[i] == analysis::link_cause::none)
            again.push_back({l.link.from, l.link.to});
    }
    const auto recheck = analysis::triage_waves(n, again);
    for (std::size_t k = 0; k < recheck.size(); ++k) m.run_links(recheck[k], "localisation recheck", k + 1, recheck.size(), true);
    run.localisation_rounds = local.size() + recheck.size();
    return run;
}

/// The most links of any one wave of a triage of these hosts (every one runs at once by default).
std::size_t widest_wave(std::size_t n, const std::optional<topology>& topo) {
    std::size_t most = 1;
    for (const auto& r : analysis::triage_schedule(n, topo ? topo->group_of : std::vector<std::size_t>{}))
        for (const auto& w : analysis::triage_waves(n, r.links)) most = std::max(most, w.size());
    return most;
}

/// Checks --min-rate-fraction and --expect (each needs --rails) and reads the manifest's
/// rail rate. With --rails at once (not --rails-serial), latency cannot be measured: without
/// --test the matrix measures bandwidth (said on stderr); a --test with latency is refused.
/// Throws client_error (usage).
void check_matrix_rail_options(matrix_options& o, const CLI::App& cmd) {
    if (o.rails.given && !o.rails.serial) {
        if (!cmd.count("--test")) {
            o.test.tests = "bandwidth";
            std::fprintf(stderr, "matrix --rails: measuring bandwidth over every rail at once (latency over all rails at once "
                                 "would time one rail while the others load the host; --rails-serial --test latency,bandwidth "
                                 "measures both, one rail after the other)\n");
        } else if (o.test.tests.find("latency") != std::string::npos) {
            throw client_error(exit_usage, fmt::format("--test {} with --rails: latency over every rail at once would time one rail "
                                                       "while the others load the host; give --test bandwidth (or bidir), or add "
                                                       "--rails-serial to measure each rail alone",
                                                       o.test.tests));
        }
    }
    const auto& expect = o.expect_file;
    const bool fraction = cmd.count("--min-rate-fraction") > 0;
    if ((fraction || !expect.empty()) && !o.rails.given)
        throw client_error(exit_usage, fmt::format("{} judges rails: give --rails all (or rail names) with it",
                                                   fraction ? "--min-rate-fraction" : "--expect"));
    if (fraction && !(o.min_rate_fraction > 0 && o.min_rate_fraction <= 1))
        throw client_error(exit_usage, fmt::format("--min-rate-fraction {}: give a fraction in (0, 1], e.g. 0.9 for 90% of the "
                                                   "link rate",
                                                   o.min_rate_fraction));
    if (expect.empty()) return;
    try {
        const auto m = node::load_manifest(expect);
        if (!m.rail_rate_gbit)
            throw client_error(exit_usage, fmt::format("--expect {} has no rail_rate_gbit: a matrix takes only the rails' rate "
                                                       "from the manifest",
                                                       expect));
        o.rail_rate_gbit = m.rail_rate_gbit;
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
}

/// A full matrix that will take 10 minutes or more says so before its first round, with the
/// triage that finds bad hosts and links in a few rounds (stderr, even with --quiet).
void say_full_matrix_cost(const matrix_options& o, const std::vector<std::string>& hosts) {
    double link_s = 0;
    for (const auto& spec : short_test_specs(transport::parse_endpoint(hosts[1]).to_string(), o.test))
        link_s += sweep_time_bound_s(spec).value_or(0);
    const double floor = full_matrix_floor_s(hosts.size(), o.max_parallel, link_s);
    if (floor < 600) return;
    std::fprintf(stderr, "matrix: a full matrix of %zu hosts is %zu rounds of up to %zu pairs at once: at least %s by the tests' "
                         "time bounds (more where the CLI host's CPU binds). --mode triage finds the bad hosts, links and "
                         "uplinks in a few rounds (docs/operations.md)\n",
                 hosts.size(), analysis::round_count(hosts.size()), std::min(o.max_parallel, analysis::pairs_per_round(hosts.size())),
                 about_duration(floor).c_str());
}

}  // namespace

command_runner add_matrix_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<matrix_options>();
    auto* cmd = app.add_subcommand("matrix", "measure every ordered pair of hosts in rounds (or triage a fleet in a few rounds); "
                                             "name the bad links, suspect hosts and slow uplinks");
    cmd->add_option("--hosts", o->hosts, "FILE (one HOST[:PORT] per line, # comments) or a comma list a,b,c")->required();
    cmd->add_option("--mode", o->mode,
                    "full: every ordered pair, n-1 rounds; triage: a few shift rounds in which every host sends to one host and "
                    "receives from another, then localisation against healthy hosts (rounds do not grow with n)")
        ->check(CLI::IsMember({"full", "triage"}))
        ->capture_default_str();
    cmd->add_option("--topology", o->topology,
                    "FILE: one 'HOST KEY=VALUE...' a line (e.g. 'node1 leaf=l1 rack=r3'); hosts are grouped by one label, "
                    "slow uplinks are told from slow hosts, and the matrix is reported per group pair");
    cmd->add_option("--group-by", o->group_by, "the --topology label to group by (default: the first label of the file)");
    cmd->add_option("--transport", o->test.transport, "tcp or rdma")->capture_default_str();
    cmd->add_option("--test", o->test.tests, "comma list of latency, bandwidth, bidir (default latency,bandwidth)");
    cmd->add_option("--sizes", o->test.sizes, "sizes for every test (default: latency 8 B, bandwidth 1 MiB, as separate runs)");
    cmd->add_option("--streams", o->test.streams, "parallel streams per direction")->capture_default_str();
    cmd->add_option("--max-time", o->test.max_time, "adaptive time cap per point, seconds")->capture_default_str();
    cmd->add_option("--warmup", o->test.warmup, "warm-up seconds before every point")->capture_default_str();
    add_format_option(*cmd, o->format, {output_format::table, output_format::json, output_format::csv});
    cmd->add_option("-o,--output", o->output, "write the table/json/csv to FILE (the summary then goes to stdout)");
    cmd->add_option("--bad-bw-fraction", o->bad_bw_fraction, "a link is bad below this fraction of the median bandwidth")
        ->capture_default_str();
    cmd->add_option("--bad-lat-multiple", o->bad_lat_multiple, "a link is bad above this multiple of the median latency")
        ->capture_default_str();
    cmd->add_option("--suspect-fraction", o->suspect_fraction, "a host is suspect when more than this share of its links is bad")
        ->capture_default_str();
    auto* parallel = cmd->add_option("--parallel", o->max_parallel,
                                     "at most N pairs (triage: links) measured at once (and N daemons probed at once, 1..4096); "
                                     "a round with more runs in waves. Default: every pair of a round (triage: every link of a "
                                     "wave) at once, within the open-file limit (raised to its hard limit; named when it binds)");
    cmd->add_flag("--ignore-counters", o->ignore_counters,
                  "judge links by their figures only, not by the TCP, NIC and RDMA counters recorded with them");
    add_rail_options(*cmd, o->rails);
    cmd->add_option("--min-rate-fraction", o->min_rate_fraction,
                    "with --rails: a link is bad when one of its rails carries less than this fraction of its link rate "
                    "(0.9: ngc_multinode_perf's pass mark); without it a rail is bad when it moves nothing or carries less "
                    "than --bad-bw-fraction of the median of its link's rails");
    cmd->add_option("--expect", o->expect_file, "with --rails: node manifest (node.toml); its rail_rate_gbit is every rail's rate");
    cmd->add_flag("--no-retest", o->no_retest, "report bad links without measuring them again (triage: no localisation)");
    auto* progress = cmd->add_flag("--progress", o->progress,
                                   "progress on stderr even when it is not a terminal: plain lines with the time left, for logs");
    cmd->add_flag("-q,--quiet,--no-progress", o->quiet, "no progress display (the default when stderr is not a terminal)")
        ->excludes(progress);
    return [o, &common, parallel, cmd]() -> int {
        o->parallel_given = parallel->count() > 0;
        finish_rail_options(*cmd, o->rails);
        check_matrix_rail_options(*o, *cmd);
        if (o->max_parallel < 1 || o->max_parallel > 4096)
            throw client_error(exit_usage, fmt::format("--parallel {}: give how many pairs to measure at once, 1 to 4096 (default: "
                                                       "every pair of a round; 1 measures one pair after the other)",
                                                       o->max_parallel));
        std::vector<std::string> hosts = read_host_list(o->hosts);
        try {
            analysis::outlier_options opt{o->bad_bw_fraction, o->bad_lat_multiple, o->suspect_fraction};
            analysis::validate(opt);
            short_test_specs(transport::parse_endpoint(hosts[1]).to_string(), o->test);  // options checked before any run
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        if (!o->group_by.empty() && o->topology.empty())
            throw client_error(exit_usage, "--group-by names a label of --topology FILE: give the topology file too");
        std::optional<topology> topo;
        if (!o->topology.empty()) topo = read_topology(o->topology, hosts, o->group_by);
        if (o->mode == "triage" && hosts.size() < 4) {
            std::fprintf(stderr, "matrix: triage needs at least 4 hosts to tell a host from a link (it has %zu); a full matrix "
                                 "of so few hosts takes as few rounds, so a full matrix is run instead\n", hosts.size());
            o->mode = "full";
        }
        const bool triage = o->mode == "triage";
        const auto limit = raise_open_file_limit();
        if (!o->parallel_given) {
            // Every pair of a round (triage: link of a wave) at once: a round takes as long as
            // its slowest pair, so waves within a round only add time.
            const auto d = default_parallel(triage ? widest_wave(hosts.size(), topo) : analysis::pairs_per_round(hosts.size()), limit);
            o->max_parallel = d.parallel;
            if (d.limited)
                std::fprintf(stderr, "%s\n", parallel_limit_note(d, limit, triage ? "wave" : "round", triage ? "links" : "pairs").c_str());
        }
        if (const auto note = size_order_note(o->test); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
        if (!triage) say_full_matrix_cost(*o, hosts);
        const auto started = std::chrono::steady_clock::now();
        matrix_runner m(*o, hosts, client_credentials(common.token_file, common.tls),
                        idle_connections_within(limit, o->max_parallel, hosts.size()));
        m.probe_hosts();
        analysis::matrix_analysis analysis;
        std::size_t rounds = 0, retest_rounds = 0;
        triage_run tr;
        if (triage) {
            tr = run_triage(m, topo, o->no_retest);
            rounds = tr.shift_rounds;
            retest_rounds = tr.localisation_rounds;
            analysis = m.analyze();
        } else {
            m.run_schedule();
            rounds = analysis::round_count(hosts.size());
            analysis = m.analyze();
            if (!o->no_retest && !analysis::links_to_retest(analysis).empty()) {
                retest_rounds = m.retest(analysis);
                analysis = {};  // not two verdicts of every link at once
                analysis = m.analyze();
            }
        }
        const auto rail_verdict = m.judge_rails(topo);
        const auto aside = rail_verdict ? links_the_rails_explain(analysis, *rail_verdict) : std::vector<analysis::link_cause>{};
        std::optional<analysis::group_verdict> groups;
        if (triage || topo || !aside.empty()) groups = judge(analysis, topo, aside);
        if (topo || !aside.empty()) analysis::apply_suspects(*groups, analysis);
        m.end_progress();
        json meta{{"schema", "meshperf.matrix/1"},
                  {"mode", o->mode},
                  {"transport", o->test.transport},
                  {"tests", o->test.tests.empty() ? "latency,bandwidth" : o->test.tests},
                  {"sizes", o->test.sizes.empty() ? "latency 8, bandwidth 1M" : o->test.sizes},
                  {"rounds", rounds},
                  {"retest_rounds", retest_rounds},
                  {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}};
        if (rail_verdict)
            meta["rails"] = analysis::to_json(*rail_verdict, m.names(),
                                              topo ? std::span<const std::string>(topo->group_names) : std::span<const std::string>{});
        const auto conns = m.connections();
        meta["connections"] = {{"opened", conns.connections_opened}, {"requests", conns.requests}};
        if (triage) {
            meta["waves"] = tr.waves;
            meta["triage"] = {{"shift_rounds", tr.rounds}, {"localisation_rounds", tr.localisation_rounds}};
        }
        const matrix_view view{m,
                               {m.names(), analysis, m.links(), meta, groups ? &*groups : nullptr, topo ? &*topo : nullptr},
                               rail_verdict ? &*rail_verdict : nullptr};
        // JSON and CSV are written a link at a time, never held whole.
        if (o->format == output_format::json)
            write_output_streamed(o->output, [&](const text_sink& out) { write_matrix_json(view.doc, out); });
        else if (o->format == output_format::csv)
            write_output_streamed(o->output, [&](const text_sink& out) { write_matrix_csv(view.doc, out); });
        else
            write_output(o->output, render(o->format, {.table = [&] { return render_table(view); }}));
        if (o->format != output_format::table || !o->output.empty()) {
            const auto summary = render_summary(view);
            std::fputs(summary.c_str(), o->output.empty() ? stderr : stdout);
        }
        if (m.measured_links() == 0) return exit_unreachable;
        bool any_bad = !analysis.unreachable.empty();
        for (const auto& v : analysis.links) any_bad = any_bad || v.bad;
        return any_bad ? exit_run_failed : exit_ok;
    };
}

}  // namespace meshperf::client
