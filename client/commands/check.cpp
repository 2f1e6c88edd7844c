#include "client/commands/check.hpp"
#include "core/json_text.hpp"

#include "client/collective/check.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/nagios_check.hpp"
#include "client/support/rail_lookup.hpp"
#include "client/support/short_runs.hpp"
#include "core/check_figures.hpp"
#include "core/error.hpp"
#include "core/prometheus.hpp"
#include "core/rail_check.hpp"
#include "node/manifest.hpp"
#include "transport/small_file.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <mutex>

namespace meshperf::client {

using nlohmann::json;

std::string render_check(const core::check_result& r, output_format format) {
    return render(format, {.json = [&] { return core::json_text(core::to_json(r), 2) + "\n"; },
                           .nagios = [&] { return core::nagios_output(r) + "\n"; }});
}

int check_parse_failure(CLI::App& app, const CLI::ParseError& e, const std::string& hint) {
    CLI::App* check = nullptr;
    for (auto* sub : app.get_subcommands({}))
        if ((sub->get_name() == "check" || sub->get_name() == "inspect") && sub->parsed()) check = sub;
    if (!check) return -1;
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string what = hint.empty() ? e.what() : hint;
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::replace(what.begin(), what.end(), '|', '/');
    // The verdict first: scripts that merge stderr into stdout read its first line.
    std::printf("%s UNKNOWN - bad options: %s\n", check->get_name() == "inspect" ? "MESHPERF INSPECT" : "MESHPERF", what.c_str());
    std::fflush(stdout);
    if (hint.empty()) app.exit(e);
    else std::fprintf(stderr, "meshperf: %s\n", hint.c_str());
    return core::exit_code(core::check_state::unknown);
}

namespace {

struct check_options {
    std::string peer;
    std::string initiator = "localhost:7470";
    short_test_options test;
    double min_gbit = 0, max_lat_us = 0;
    std::string baseline;
    double warn = 0.9, crit = 0.75;
    std::string prom_file;
    output_format format = output_format::nagios;
    double timeout_s = 120;
    collective_options collective;  ///< --collective OP --hosts ... (client/collective/check.hpp)
    double min_busbw = 0;
    core::counter_thresholds counters;  ///< --retransmit-warn/-crit, --max-symbol-errors-per-hour
    bool ignore_counters = false;       ///< --ignore-counters: judge the figures only
    rail_options rails;                 ///< --rails, --rail-map, --rails-serial
    double min_rate_fraction = 0;       ///< --min-rate-fraction: each rail against this share of its link rate
    std::string expect;                 ///< --expect node.toml: its rail_rate_gbit is the rails' rate
};

/// The options of check --collective, as the command line gave them.
collective_check_options collective_check_options_of(const check_options& o, const CLI::App& cmd) {
    collective_check_options c;
    c.collective = o.collective;
    c.collective.transport = o.test.transport;
    c.hosts_given = cmd.count("--hosts") > 0;
    c.algo_given = cmd.count("--algo") > 0;
    c.peer = o.peer;
    if (cmd.count("--min-busbw")) c.min_busbw = o.min_busbw;
    c.baseline = o.baseline;
    c.warn = o.warn;
    c.crit = o.crit;
    c.prom_file = o.prom_file;
    c.format = o.format;
    c.timeout_s = o.timeout_s;
    c.counters = o.counters;
    c.ignore_counters = o.ignore_counters;
    return c;
}

/// Prints the verdict, writes the textfile, returns the exit code. Shared by the normal
/// path and the timeout watchdog, so it runs at most once.
class check_reporter {
public:
    check_reporter(output_format format, std::string prom_file) : format_(format), prom_file_(std::move(prom_file)) {}

    int report(const core::check_result& r) {
        std::lock_guard lock(m_);
        if (done_) return core::exit_code(r.state);
        done_ = true;
        const auto text = render_check(r, format_);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        // A textfile that could not be written must not pass as OK; a WARNING or CRITICAL
        // verdict stands (the bad link matters more than the broken export).
        if (!write_textfile(prom_file_, [&](double now) { return core::check_textfile(r, now); }) &&
            r.state == core::check_state::ok)
            return core::exit_code(core::check_state::unknown);
        return core::exit_code(r.state);
    }

private:
    std::mutex m_;
    bool done_ = false;
    output_format format_;
    std::string prom_file_;
};

/// Baseline figures from --baseline FILE or --baseline stored.
std::vector<core::check_figure> load_baseline(const check_options& o, const std::string& peer, const daemon_client& initiator) {
    json doc;
    if (o.baseline == "stored") {
        doc = initiator.get(fmt::format("/v1/baselines?peer={}&transport={}", peer, o.test.transport));
    } else {
        std::string text;
        try {
            text = transport::read_small_file(o.baseline, transport::max_list_file_bytes, "--baseline");
        } catch (const core::spec_error& e) {
            throw core::spec_error(fmt::format("{} (or say --baseline stored)", e.what()));
        }
        doc = json::parse(text, nullptr, false);
        if (doc.is_discarded()) throw core::spec_error(fmt::format("--baseline {}: not valid JSON", o.baseline));
    }
    auto figures = core::baseline_figures_from_json(doc, peer, o.test.transport);
    if (figures.empty()) {
        if (o.baseline == "stored")
            throw core::spec_error(fmt::format("no baseline stored on {} for {} over {}: save one with "
                                               "'meshperf baseline save {} --initiator {}'",
                                               initiator.address().to_string(), peer, o.test.transport, peer,
                                               initiator.address().to_string()));
        throw core::spec_error(fmt::format("--baseline {} holds no figure for {} over {}", o.baseline, peer, o.test.transport));
    }
    return figures;
}

/// The rails of --rails, matched from both daemons' /v1/info, at the manifest's rate when
/// --expect gives one (the rate a rail should have, where the NIC's own is not the target,
/// as on a shaped or a deliberately slower link). Empty without --rails.
std::vector<core::rail_pair> check_rails(const check_options& o, const core::check_target& target, const daemon_client& initiator,
                                         const credentials& creds) {
    if (!o.rails.given) return {};
    std::vector<core::rail_pair> rails;
    try {
        rails = look_up_rails(initiator, target.peer, creds, o.rails);
    } catch (const client_error& e) {
        if (e.code() == exit_usage) throw core::spec_error(e.what());
        throw;
    }
    if (!o.expect.empty())
        if (const auto m = node::load_manifest(o.expect); m.rail_rate_gbit)
            for (auto& r : rails) r.rate_gbit = *m.rail_rate_gbit;
    return rails;
}

core::check_result run_check(const check_options& o, bool min_given, bool lat_given, const core::check_target& target,
                             const credentials& creds) {
    const daemon_client initiator(o.initiator, creds);
    core::check_limits limits;
    // With --rails, --min-gbit is each rail's floor (rail_floor_verdicts), not the aggregate's.
    const bool rail_floor = min_given && o.rails.given;
    if (min_given && !rail_floor) limits.min_gbit = o.min_gbit;
    if (lat_given) limits.max_lat_us = o.max_lat_us;
    limits.warn = o.warn;
    limits.crit = o.crit;
    if (!o.baseline.empty()) limits.baseline = load_baseline(o, target.peer, initiator);
    // --min-rate-fraction or a rail floor alone judges the rails only (the aggregate figure
    // has no limit to meet).
    const bool rails_only = !limits.min_gbit && !lat_given && o.baseline.empty();
    if (!rails_only) core::validate(limits);
    core::validate(o.counters);

    // Measure what is judged: the tests with a limit, at the baseline's sizes when there is one.
    short_test_options test = o.test;
    std::vector<std::uint64_t> lat_sizes, bw_sizes;
    for (const auto& f : limits.baseline) (f.kind == core::figure_kind::latency ? lat_sizes : bw_sizes).push_back(f.size_bytes);
    if (test.tests.empty()) {
        std::vector<std::string> t;
        if (limits.max_lat_us || !lat_sizes.empty()) t.push_back("latency");
        if (min_given || !bw_sizes.empty()) t.push_back("bandwidth");
        for (const auto& s : t) test.tests += (test.tests.empty() ? "" : ",") + s;
    }
    if (test.tests.empty() && o.min_rate_fraction > 0) test.tests = "bandwidth";
    const auto specs = specs_with_rails(short_test_specs(target.peer, test, lat_sizes, bw_sizes), check_rails(o, target, initiator, creds),
                                  o.rails.serial);

    std::vector<core::check_figure> measured;
    std::vector<core::counter_verdict> counters;
    std::vector<core::figure_verdict> rails;
    for (const auto& spec : specs) {
        auto out = run_to_completion(initiator, spec);
        if (!out.completed) {
            const auto why = out.initiator_unreachable ? out.error : fmt::format("the measurement failed: {}", out.error);
            return core::unknown_result(target, why);
        }
        for (const auto& f : core::figures_of(out.run)) measured.push_back(f);
        if (!o.ignore_counters)
            for (auto& c : core::counter_verdicts_of(out.run, o.counters)) counters.push_back(std::move(c));
        if (o.min_rate_fraction > 0)
            for (auto& v : core::rail_verdicts(out.run, o.min_rate_fraction)) rails.push_back(std::move(v));
        if (rail_floor)
            for (auto& v : core::rail_floor_verdicts(out.run, o.min_gbit)) rails.push_back(std::move(v));
    }
    core::check_result result;
    if (rails_only) {
        result.target = target;
        result.state = rails.empty() ? core::check_state::unknown : core::check_state::ok;
        if (rails.empty()) result.message = "no rail was measured";
        for (auto& v : rails) {
            result.state = core::worst(result.state, v.state);
            result.figures.push_back(std::move(v));
        }
    } else {
        result = core::evaluate_check(target, measured, limits);
        core::add_rail_verdicts(result, std::move(rails));
    }
    core::add_counter_verdicts(result, std::move(counters));
    return result;
}

}  // namespace

command_runner add_check_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<check_options>();
    auto* cmd = app.add_subcommand("check", "health check of the path to a peer: one Nagios line, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN");
    cmd->add_option("peer", o->peer, "peer daemon HOST[:PORT] (not with --collective)");
    cmd->add_option("--initiator", o->initiator, "daemon that runs the measurement, HOST[:PORT]")->capture_default_str();
    cmd->add_option("--transport", o->test.transport, "tcp or rdma")->capture_default_str();
    cmd->add_option("--test", o->test.tests, "comma list of latency, bandwidth (default: the tests with a limit)");
    cmd->add_option("--sizes", o->test.sizes, "sizes for every test (default: latency 8 B, bandwidth 1 MiB, or the baseline's sizes)");
    cmd->add_option("--streams", o->test.streams, "parallel streams per direction")->capture_default_str();
    cmd->add_option("--max-time", o->test.max_time, "adaptive time cap per point, seconds")->capture_default_str();
    cmd->add_option("--warmup", o->test.warmup, "warm-up seconds before every point")->capture_default_str();
    cmd->add_option("--min-gbit", o->min_gbit, "CRITICAL when bandwidth is below this many Gbit/s (with --rails: each rail's floor, the slow rail named)");
    cmd->add_option("--max-lat-us", o->max_lat_us, "CRITICAL when one-way latency is above this many microseconds");
    cmd->add_option("--baseline", o->baseline, "FILE (baseline or run JSON) or 'stored' (kept by the initiator: meshperf baseline save); "
                                                "with --collective, a collective result (meshperf collective --format json -o FILE)");
    cmd->add_option("--warn", o->warn, "WARNING below this fraction of the baseline performance")->capture_default_str();
    cmd->add_option("--crit", o->crit, "CRITICAL below this fraction of the baseline performance")->capture_default_str();
    cmd->add_option("--prom-file", o->prom_file, "also write a node_exporter textfile here (atomically: temporary file, then rename)");
    add_format_option(*cmd, o->format, {output_format::nagios, output_format::json});
    cmd->add_option("--timeout", o->timeout_s, "UNKNOWN when the check takes longer than this many seconds")->capture_default_str();
    cmd->add_option("--retransmit-warn", o->counters.retransmit_warn_share,
                    "WARNING when a bandwidth point retransmitted more than this share of its TCP segments")
        ->capture_default_str();
    cmd->add_option("--retransmit-crit", o->counters.retransmit_crit_share, "CRITICAL above this share")->capture_default_str();
    cmd->add_option("--max-symbol-errors-per-hour", o->counters.symbol_errors_per_hour,
                    "WARNING when an RDMA port's symbol errors during a point run faster (the IBTA bound: 120/hour)")
        ->capture_default_str();
    cmd->add_flag("--ignore-counters", o->ignore_counters,
                  "judge the figures only, not the TCP, NIC and RDMA counters recorded with them (with --collective: each rank's; docs/counters.md)");
    add_rail_options(*cmd, o->rails);
    cmd->add_option("--min-rate-fraction", o->min_rate_fraction,
                    "with --rails: CRITICAL when a rail carries less than this fraction of its link rate (0.9: ngc_multinode_perf's pass mark)");
    cmd->add_option("--expect", o->expect, "with --rails: node manifest (node.toml); its rail_rate_gbit is every rail's expected rate");
    auto& c = o->collective;
    c.sizes = default_collective_check_size;
    cmd->add_option("--collective", c.ops, "check one collective instead of a path: allreduce, allgather, reduce-scatter, "
                                           "alltoall, broadcast or incast (with --hosts, and --min-busbw and/or --baseline)");
    cmd->add_option("--min-busbw", o->min_busbw, "--collective: CRITICAL when busbw is below this many GB/s (nccl-tests' unit)");
    cmd->add_option("--hosts", c.hosts, "--collective: the daemons, a file (one HOST[:PORT] per line) or a comma list");
    cmd->add_option("--size", c.sizes, "--collective: the size S measured")->capture_default_str();
    cmd->add_option("--algo", c.algo, "--collective: ring, tree or direct (default: the op's own)");
    cmd->add_option("--memory", c.memory, "--collective: host or cuda:N")->capture_default_str();
    return [o, cmd, &common]() -> int {
        if (cmd->count("--collective"))
            return run_collective_check(collective_check_options_of(*o, *cmd), common.token_file, common.tls);
        core::check_target target{o->peer, o->test.transport, cmd->count("--initiator") ? o->initiator : ""};
        auto reporter = std::make_shared<check_reporter>(o->format, o->prom_file);
        if (o->peer.empty())
            return reporter->report(core::unknown_result(target, "bad options: give the peer HOST[:PORT], or --collective OP "
                                                                 "--hosts ... --min-busbw X"));
        try {
            target.peer = transport::parse_endpoint(o->peer).to_string();
            if (!target.initiator.empty()) target.initiator = transport::parse_endpoint(o->initiator).to_string();
            check_timeout(o->timeout_s);
        } catch (const core::spec_error& e) {
            return reporter->report(core::unknown_result(target, fmt::format("bad options: {}", e.what())));
        }
        if (const auto bad = prom_file_problem(o->prom_file); !bad.empty()) {  // said before measuring, not after
            std::fprintf(stderr, "meshperf: %s\n", bad.c_str());
            return check_reporter(o->format, "").report(core::unknown_result(target, "bad options: " + bad));
        }
        // stderr: a monitoring system reads only the verdict on stdout.
        if (const auto note = size_order_note(o->test); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
        try {
            finish_rail_options(*cmd, o->rails);
            if (!o->rails.given && (cmd->count("--min-rate-fraction") || cmd->count("--expect")))
                throw client_error(exit_usage, "--min-rate-fraction and --expect judge rails: give --rails all (or rail names)");
            if (cmd->count("--min-rate-fraction") && !(o->min_rate_fraction > 0 && o->min_rate_fraction <= 1))
                throw client_error(exit_usage, fmt::format("--min-rate-fraction {} is out of range: give a fraction in (0, 1], "
                                                           "e.g. 0.9", o->min_rate_fraction));
        } catch (const client_error& e) {
            return reporter->report(core::unknown_result(target, fmt::format("bad options: {}", e.what())));
        }
        if (!cmd->count("--min-gbit") && !cmd->count("--max-lat-us") && o->baseline.empty() && !cmd->count("--min-rate-fraction"))
            return reporter->report(core::unknown_result(target, "bad options: give --min-gbit and/or --max-lat-us, --baseline "
                                                                 "FILE|stored, or --rails with --min-rate-fraction"));

        return run_with_deadline(
            o->timeout_s,
            [&] {
                core::check_result result;
                try {
                    result = run_check(*o, cmd->count("--min-gbit") > 0, cmd->count("--max-lat-us") > 0, target,
                                       client_credentials(common.token_file, common.tls));
                } catch (const core::spec_error& e) {
                    result = core::unknown_result(target, fmt::format("bad options: {}", e.what()));
                } catch (const std::exception& e) {
                    result = core::unknown_result(target, e.what());
                }
                return reporter->report(result);
            },
            [&] {
                return reporter->report(
                    core::unknown_result(target, fmt::format("no verdict within --timeout {} s (daemon or peer hung?)", o->timeout_s)));
            });
    };
}

}  // namespace meshperf::client
