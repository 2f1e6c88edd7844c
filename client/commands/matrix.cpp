// meshperf matrix, the command: its options, their checks, the orchestrator called
// (client/fleet: every ordered pair in rounds of disjoint pairs, or a triage's shift rounds
// and localisation, judged with robust outlier rules), and the matrix rendered: a table with
// its summary, JSON or CSV. --topology groups the hosts so that a slow uplink is told from
// its hosts; --rails measures every link over all its rails at once, each rail judged too.
// Exit: 0 all links good, 1 bad links or unreachable hosts, 2 usage, 3 no link could be
// measured at all.
#include "client/commands/commands.hpp"
#include "client/fleet/matrix_run.hpp"
#include "client/fleet/matrix_runner.hpp"
#include "client/fleet/matrix_settings.hpp"
#include "client/fleet/triage_run.hpp"
#include "client/render/matrix_json.hpp"
#include "client/render/matrix_text.hpp"
#include "client/render/table.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/open_files.hpp"
#include "client/support/output_format.hpp"
#include "client/support/progress.hpp"
#include "client/support/rail_lookup.hpp"
#include "client/support/short_runs.hpp"
#include "client/support/topology_file.hpp"
#include "analysis/matrix_schedule.hpp"
#include "analysis/outliers.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/triage_verdict.hpp"
#include "core/error.hpp"
#include "node/manifest.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The command's options: the orchestrator's settings (client/fleet/matrix_settings.hpp)
/// and what only the command reads.
struct matrix_options {
    matrix_settings run;            ///< what the orchestrator reads
    std::string hosts;              ///< --hosts FILE or a comma list
    output_format format = output_format::table;
    std::string output;             ///< -o FILE (empty: stdout)
    bool no_retest = false;         ///< --no-retest (triage: no localisation)
    bool parallel_given = false;    ///< --parallel was on the command line
    std::string mode = "full";      ///< full: every ordered pair; triage: shift rounds, then localisation
    std::string topology;           ///< --topology FILE (empty: none)
    std::string group_by;           ///< --group-by KEY (empty: the file's first label)
    std::string expect_file;        ///< --expect node.toml
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

/// Checks --min-rate-fraction and --expect (each needs --rails) and reads the manifest's
/// rail rate. With --rails at once (not --rails-serial), latency cannot be measured: without
/// --test the matrix measures bandwidth (said on stderr); a --test with latency is refused.
/// Throws client_error (usage).
void check_matrix_rail_options(matrix_options& o, const CLI::App& cmd) {
    if (o.run.rails.given && !o.run.rails.serial) {
        if (!cmd.count("--test")) {
            o.run.test.tests = "bandwidth";
            std::fprintf(stderr, "matrix --rails: measuring bandwidth over every rail at once (latency over all rails at once "
                                 "would time one rail while the others load the host; --rails-serial --test latency,bandwidth "
                                 "measures both, one rail after the other)\n");
        } else if (o.run.test.tests.find("latency") != std::string::npos) {
            throw client_error(exit_usage, fmt::format("--test {} with --rails: latency over every rail at once would time one rail "
                                                       "while the others load the host; give --test bandwidth (or bidir), or add "
                                                       "--rails-serial to measure each rail alone",
                                                       o.run.test.tests));
        }
    }
    const auto& expect = o.expect_file;
    const bool fraction = cmd.count("--min-rate-fraction") > 0;
    if ((fraction || !expect.empty()) && !o.run.rails.given)
        throw client_error(exit_usage, fmt::format("{} judges rails: give --rails all (or rail names) with it",
                                                   fraction ? "--min-rate-fraction" : "--expect"));
    if (fraction && !(o.run.min_rate_fraction > 0 && o.run.min_rate_fraction <= 1))
        throw client_error(exit_usage, fmt::format("--min-rate-fraction {}: give a fraction in (0, 1], e.g. 0.9 for 90% of the "
                                                   "link rate",
                                                   o.run.min_rate_fraction));
    if (expect.empty()) return;
    try {
        const auto m = node::load_manifest(expect);
        if (!m.rail_rate_gbit)
            throw client_error(exit_usage, fmt::format("--expect {} has no rail_rate_gbit: a matrix takes only the rails' rate "
                                                       "from the manifest",
                                                       expect));
        o.run.rail_rate_gbit = m.rail_rate_gbit;
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
}

/// A full matrix that will take 10 minutes or more says so before its first round, with the
/// triage that finds bad hosts and links in a few rounds (stderr, even with --quiet).
void say_full_matrix_cost(const matrix_options& o, const std::vector<std::string>& hosts) {
    double link_s = 0;
    for (const auto& spec : short_test_specs(transport::parse_endpoint(hosts[1]).to_string(), o.run.test))
        link_s += sweep_time_bound_s(spec).value_or(0);
    const double floor = full_matrix_floor_s(hosts.size(), o.run.max_parallel, link_s);
    if (floor < 600) return;
    std::fprintf(stderr, "matrix: a full matrix of %zu hosts is %zu rounds of up to %zu pairs at once: at least %s by the tests' "
                         "time bounds (more where the CLI host's CPU binds). --mode triage finds the bad hosts, links and "
                         "uplinks in a few rounds (docs/operations.md)\n",
                 hosts.size(), analysis::round_count(hosts.size()), std::min(o.run.max_parallel, analysis::pairs_per_round(hosts.size())),
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
    cmd->add_option("--transport", o->run.test.transport, "tcp or rdma")->capture_default_str();
    cmd->add_option("--test", o->run.test.tests, "comma list of latency, bandwidth, bidir (default latency,bandwidth)");
    cmd->add_option("--sizes", o->run.test.sizes, "sizes for every test (default: latency 8 B, bandwidth 1 MiB, as separate runs)");
    cmd->add_option("--streams", o->run.test.streams, "parallel streams per direction")->capture_default_str();
    cmd->add_option("--max-time", o->run.test.max_time, "adaptive time cap per point, seconds")->capture_default_str();
    cmd->add_option("--warmup", o->run.test.warmup, "warm-up seconds before every point")->capture_default_str();
    add_format_option(*cmd, o->format, {output_format::table, output_format::json, output_format::csv});
    cmd->add_option("-o,--output", o->output, "write the table/json/csv to FILE (the summary then goes to stdout)");
    cmd->add_option("--bad-bw-fraction", o->run.bad_bw_fraction, "a link is bad below this fraction of the median bandwidth")
        ->capture_default_str();
    cmd->add_option("--bad-lat-multiple", o->run.bad_lat_multiple, "a link is bad above this multiple of the median latency")
        ->capture_default_str();
    cmd->add_option("--suspect-fraction", o->run.suspect_fraction, "a host is suspect when more than this share of its links is bad")
        ->capture_default_str();
    auto* parallel = cmd->add_option("--parallel", o->run.max_parallel,
                                     "at most N pairs (triage: links) measured at once (and N daemons probed at once, 1..4096); "
                                     "a round with more runs in waves. Default: every pair of a round (triage: every link of a "
                                     "wave) at once, within the open-file limit (raised to its hard limit; named when it binds)");
    cmd->add_flag("--ignore-counters", o->run.ignore_counters,
                  "judge links by their figures only, not by the TCP, NIC and RDMA counters recorded with them");
    add_rail_options(*cmd, o->run.rails);
    cmd->add_option("--min-rate-fraction", o->run.min_rate_fraction,
                    "with --rails: a link is bad when one of its rails carries less than this fraction of its link rate "
                    "(0.9: ngc_multinode_perf's pass mark); without it a rail is bad when it moves nothing or carries less "
                    "than --bad-bw-fraction of the median of its link's rails");
    cmd->add_option("--expect", o->expect_file, "with --rails: node manifest (node.toml); its rail_rate_gbit is every rail's rate");
    cmd->add_flag("--no-retest", o->no_retest, "report bad links without measuring them again (triage: no localisation)");
    auto* progress = cmd->add_flag("--progress", o->run.progress,
                                   "progress on stderr even when it is not a terminal: plain lines with the time left, for logs");
    cmd->add_flag("-q,--quiet,--no-progress", o->run.quiet, "no progress display (the default when stderr is not a terminal)")
        ->excludes(progress);
    return [o, &common, parallel, cmd]() -> int {
        o->parallel_given = parallel->count() > 0;
        finish_rail_options(*cmd, o->run.rails);
        check_matrix_rail_options(*o, *cmd);
        if (o->run.max_parallel < 1 || o->run.max_parallel > 4096)
            throw client_error(exit_usage, fmt::format("--parallel {}: give how many pairs to measure at once, 1 to 4096 (default: "
                                                       "every pair of a round; 1 measures one pair after the other)",
                                                       o->run.max_parallel));
        std::vector<std::string> hosts = read_host_list(o->hosts);
        try {
            analysis::outlier_options opt{o->run.bad_bw_fraction, o->run.bad_lat_multiple, o->run.suspect_fraction};
            analysis::validate(opt);
            short_test_specs(transport::parse_endpoint(hosts[1]).to_string(), o->run.test);  // options checked before any run
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
            o->run.max_parallel = d.parallel;
            if (d.limited)
                std::fprintf(stderr, "%s\n", parallel_limit_note(d, limit, triage ? "wave" : "round", triage ? "links" : "pairs").c_str());
        }
        if (const auto note = size_order_note(o->run.test); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
        if (!triage) say_full_matrix_cost(*o, hosts);
        const auto started = std::chrono::steady_clock::now();
        matrix_runner m(o->run, hosts, client_credentials(common.token_file, common.tls),
                        idle_connections_within(limit, o->run.max_parallel, hosts.size()));
        m.probe_hosts();
        const auto outcome = run_matrix(m, topo, triage, o->no_retest);
        const auto& analysis = outcome.analysis;
        const auto& rail_verdict = outcome.rails;
        const auto& groups = outcome.groups;
        m.end_progress();
        json meta{{"schema", "meshperf.matrix/1"},
                  {"mode", o->mode},
                  {"transport", o->run.test.transport},
                  {"tests", o->run.test.tests.empty() ? "latency,bandwidth" : o->run.test.tests},
                  {"sizes", o->run.test.sizes.empty() ? "latency 8, bandwidth 1M" : o->run.test.sizes},
                  {"rounds", outcome.rounds},
                  {"retest_rounds", outcome.retest_rounds},
                  {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}};
        if (rail_verdict)
            meta["rails"] = analysis::to_json(*rail_verdict, m.names(),
                                              topo ? std::span<const std::string>(topo->group_names) : std::span<const std::string>{});
        const auto conns = m.connections();
        meta["connections"] = {{"opened", conns.connections_opened}, {"requests", conns.requests}};
        if (triage) {
            meta["waves"] = outcome.triage.waves;
            meta["triage"] = {{"shift_rounds", outcome.triage.rounds}, {"localisation_rounds", outcome.triage.localisation_rounds}};
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
