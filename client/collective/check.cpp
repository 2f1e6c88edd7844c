#include "client/collective/check.hpp"
#include "core/figure_text.hpp"

#include "client/collective/run.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/nagios_check.hpp"
#include "client/support/result_files.hpp"
#include "core/check_figures.hpp"
#include "core/error.hpp"
#include "core/prometheus.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <fmt/ranges.h>
#include <mutex>
#include <tuple>

#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

std::string what_of(const core::collective_result& run, const core::collective_point& p) {
    return fmt::format("{} {} over {} ranks ({}, {})", core::to_string(p.op), core::to_string(p.algo), p.ranks,
                       run.spec.transport, run.spec.memory);
}

std::string number(double v) { return fmt::format("{}", core::plain_number(v, 4)); }

std::string host_of(const core::collective_result& run, unsigned rank) {
    return rank < run.spec.hosts.size() ? fmt::format("rank {} ({})", rank, run.spec.hosts[rank]) : fmt::format("rank {}", rank);
}

/// Judges each rank's counters over the point (core::judge_link_counters, as one end of a
/// path): raises v.state to the worst finding, appends one clause per rank that has findings
/// to `text` and one perfdata item per finding to v.perfdata.
void judge_rank_counters(const core::collective_result& run, const core::collective_point& p,
                         const core::counter_thresholds& thresholds, collective_verdict& v, std::string& text) {
    for (unsigned q = 0; q < p.rank_counters.size(); ++q) {
        if (!p.rank_counters[q]) continue;
        const auto findings = core::judge_link_counters({p.rank_counters[q], std::nullopt}, thresholds);
        if (findings.empty()) continue;
        std::vector<std::string> reasons;
        for (const auto& f : findings) {
            v.state = core::worst(v.state, f.state);
            reasons.push_back(f.reason);
            v.perfdata += " " + core::perfdata_item(core::perfdata_label_of(fmt::format("rank{}_{}_{}", q, f.where, f.counter)),
                                                    static_cast<double>(f.delta), "", "", "0");
        }
        const bool slowest_end = p.slowest_link && (p.slowest_link->from == q || p.slowest_link->to == q);
        text += fmt::format("; {} {}: {}{}", host_of(run, q), findings.front().where, fmt::join(reasons, ", "),
                            slowest_end ? " (an end of the slowest link)" : "");
    }
    // Each rank's sending sockets' TCP counters: over a ring, exactly its link to the right.
    const bool ring = p.algo == core::collective_algo::ring;
    for (unsigned q = 0; q < p.rank_tcp_counters.size(); ++q) {
        if (!p.rank_tcp_counters[q]) continue;
        const auto f = core::judge_tcp_counters(*p.rank_tcp_counters[q], thresholds);
        if (!f) continue;
        v.state = core::worst(v.state, f->state);
        v.perfdata += " " + core::perfdata_item(fmt::format("rank{}_retransmit_share", q),
                                                p.rank_tcp_counters[q]->retransmit_share(), "", "", "0");
        const unsigned right = p.ranks ? (q + 1) % p.ranks : 0;
        const bool slowest = ring && p.slowest_link && p.slowest_link->from == q;
        text += ring ? fmt::format("; {} sending to {}: TCP retransmits: {}{}", host_of(run, q), host_of(run, right), f->reason,
                                   slowest ? " (the slowest link)" : "")
                     : fmt::format("; {} over the sockets it sends on: TCP retransmits: {}", host_of(run, q), f->reason);
    }
}

}  // namespace

std::string slowest_text(const core::collective_result& run, const core::collective_point& p) {
    if (!p.slowest_link) return fmt::format("slowest {}", host_of(run, p.slowest_rank));
    // In a ring every rank waits for its left neighbour, so the rank that takes longest is
    // usually the one that receives over the slow link, not the slow host: the link's
    // sender is named as the likely cause.
    const auto& l = *p.slowest_link;
    auto text = fmt::format("slowest link {} -> {} at {} Gbit/s: likely cause {}, its sender", host_of(run, l.from),
                            host_of(run, l.to), number(l.gbit_per_s), host_of(run, l.from));
    if (p.slowest_rank == l.to)
        text += fmt::format(" (the slowest rank, {}, waits for what it sends)", host_of(run, p.slowest_rank));
    else if (p.slowest_rank != l.from)
        text += fmt::format("; slowest rank {}", host_of(run, p.slowest_rank));
    return text;
}

collective_verdict unknown_collective(collective_check_labels labels, std::string why) {
    collective_verdict v;
    v.what = labels.op.empty() ? std::string("collective") : labels.op;
    v.summary = std::move(why);
    v.labels = std::move(labels);
    return v;
}

collective_check_labels collective_check_labels_of(const core::collective_spec& spec) {
    collective_check_labels l{"", "", spec.transport, spec.memory};
    if (!spec.ops.empty()) {
        l.op = core::to_string(spec.ops.front());
        l.algo = core::to_string(core::algo_for(spec, spec.ops.front()));
    }
    return l;
}

collective_verdict judge_collective(const core::collective_result& run, const collective_limits& limits) {
    auto labels = collective_check_labels_of(run.spec);
    if (run.state != core::run_state::completed)
        return unknown_collective(labels, fmt::format("the collective {} {}: {}", run.id, run.state.text(),
                                                      run.error.empty() ? "(no error given)" : run.error));
    if (run.points.empty())
        return unknown_collective(labels, fmt::format("the collective {} completed without a point", run.id));
    const auto& p = run.points.front();
    collective_verdict v;
    v.labels = std::move(labels);
    v.point = p;
    v.what = what_of(run, p);

    std::optional<double> warn_at, crit_at = limits.min_busbw;
    if (limits.baseline_busbw) {
        warn_at = limits.warn * *limits.baseline_busbw;
        crit_at = std::max(crit_at.value_or(0.0), limits.crit * *limits.baseline_busbw);
    }
    const auto range = [&](const std::optional<double>& at) { return at ? number(*at) + ":" : std::string(); };
    v.perfdata = core::perfdata_item("busbw_gbyte", p.busbw_gbyte_per_s, range(warn_at), range(crit_at), "0");
    auto text = fmt::format("busbw {} GB/s at {}, time {} µs", number(p.busbw_gbyte_per_s), core::format_size(p.size_bytes),
                            number(p.time_s * 1e6));
    if (limits.baseline_busbw)
        text += fmt::format(", {:.0f}% of the baseline's {} GB/s ({})", 100 * p.busbw_gbyte_per_s / *limits.baseline_busbw,
                            number(*limits.baseline_busbw), limits.baseline_source);
    v.state = core::check_state::ok;
    if (limits.min_busbw && p.busbw_gbyte_per_s < *limits.min_busbw) {
        v.state = core::check_state::critical;
        text += fmt::format(", below --min-busbw {} GB/s", number(*limits.min_busbw));
    } else if (limits.baseline_busbw && p.busbw_gbyte_per_s < limits.crit * *limits.baseline_busbw) {
        v.state = core::check_state::critical;
        text += fmt::format(", below --crit {} of the baseline", number(limits.crit));
    } else if (limits.baseline_busbw && p.busbw_gbyte_per_s < limits.warn * *limits.baseline_busbw) {
        v.state = core::check_state::warning;
        text += fmt::format(", below --warn {} of the baseline", number(limits.warn));
    }
    if (v.state != core::check_state::ok) text += "; " + slowest_text(run, p);
    if (p.wrong && *p.wrong > 0) {
        v.state = core::check_state::critical;
        text += fmt::format("; {} wrong element{} (data corrupted on the way)", *p.wrong, *p.wrong == 1 ? "" : "s");
    }
    if (limits.judge_counters) judge_rank_counters(run, p, limits.counters, v, text);
    v.summary = text;
    return v;
}

std::pair<double, std::string> collective_baseline(const json& doc, const std::string& file, const core::collective_spec& spec) {
    if (spec.ops.size() != 1 || spec.sizes.size() != 1)
        throw core::spec_error("a collective baseline is looked up for one op at one size");
    core::collective_result base;
    try {
        base = core::collective_result_from_json(doc);
    } catch (const std::exception& e) {
        throw core::spec_error(fmt::format("--baseline {}: not a collective result (meshperf collective --format json -o FILE): {}",
                                           file, e.what()));
    }
    const auto op = spec.ops.front();
    const auto algo = core::algo_for(spec, op);
    const auto ranks = static_cast<unsigned>(spec.hosts.size());
    const auto size = spec.sizes.front();
    if (base.spec.transport != spec.transport)
        throw core::spec_error(fmt::format("--baseline {}: measured over {}, the check runs over {}; give a baseline of the "
                                           "same transport",
                                           file, base.spec.transport, spec.transport));
    std::vector<std::string> have;
    for (const auto& p : base.points) {
        if (p.op == op && p.algo == algo && p.ranks == ranks && p.size_bytes == size) {
            if (!(p.busbw_gbyte_per_s > 0) || !std::isfinite(p.busbw_gbyte_per_s))
                throw core::spec_error(fmt::format("--baseline {}: the point's busbw is {}, not a positive figure", file,
                                                   p.busbw_gbyte_per_s));
            return {p.busbw_gbyte_per_s, fmt::format("{}, run {}", file, base.id.empty() ? std::string("?") : base.id)};
        }
        have.push_back(fmt::format("{} {} over {} ranks at {}", core::to_string(p.op), core::to_string(p.algo), p.ranks,
                                   core::format_size(p.size_bytes)));
    }
    throw core::spec_error(fmt::format("--baseline {} has no {} {} point over {} ranks at {} (it has: {}); check with the "
                                       "baseline's --size and hosts, or measure a baseline of these",
                                       file, core::to_string(op), core::to_string(algo), ranks, core::format_size(size),
                                       have.empty() ? std::string("no points") : fmt::format("{}", fmt::join(have, "; "))));
}

std::string collective_check_textfile(const collective_verdict& v, double unix_seconds) {
    core::exposition e;
    e.declare("meshperf_collective_check_status", core::metric_type::gauge,
              "State of the last meshperf collective check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.");
    e.declare("meshperf_collective_check_busbw_bits_per_second", core::metric_type::gauge,
              "Bus bandwidth (nccl-tests' busbw) of the last meshperf collective check, in bits per second as "
              "meshperfd's meshperf_collective_busbw_bits_per_second.");
    e.declare("meshperf_collective_check_time_seconds", core::metric_type::gauge,
              "Time of one collective in the last meshperf collective check (the slowest rank's, averaged over iterations).");
    e.declare("meshperf_collective_check_wrong_elements", core::metric_type::gauge,
              "Elements of the result that were wrong in the last meshperf collective check, summed over ranks.");
    e.declare("meshperf_collective_check_last_run_timestamp_seconds", core::metric_type::gauge,
              "When the last meshperf collective check ran, in seconds since the Unix epoch.");
    const auto& l = v.labels;
    const std::initializer_list<core::metric_label> run_labels{
        {"op", l.op}, {"algo", l.algo}, {"transport", l.transport}, {"memory", l.memory}};
    e.add("meshperf_collective_check_status", run_labels, core::exit_code(v.state));
    if (v.point) {
        const auto& p = *v.point;
        const std::vector<core::metric_label> point_labels{{"op", l.op},           {"algo", l.algo},
                                                           {"transport", l.transport}, {"memory", l.memory},
                                                           {"ranks", std::to_string(p.ranks)},
                                                           {"size_bytes", std::to_string(p.size_bytes)}};
        if (p.busbw_gbyte_per_s > 0 && std::isfinite(p.busbw_gbyte_per_s))
            e.add("meshperf_collective_check_busbw_bits_per_second", point_labels, core::bit_per_s_from_gbit(p.busbw_gbit_per_s));
        if (p.time_s > 0 && std::isfinite(p.time_s)) e.add("meshperf_collective_check_time_seconds", point_labels, p.time_s);
        if (p.wrong) e.add("meshperf_collective_check_wrong_elements", point_labels, static_cast<double>(*p.wrong));
    }
    e.add("meshperf_collective_check_last_run_timestamp_seconds", run_labels, unix_seconds);
    return e.render();
}

std::string nagios_line(const collective_verdict& v) {
    auto summary = v.summary;
    for (auto& c : summary)
        if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return fmt::format("MESHPERF {} - {}: {}{}", core::to_string(v.state), v.what, summary,
                       v.perfdata.empty() ? "" : " | " + v.perfdata);
}

std::string render_collective_check(const collective_verdict& v, output_format format) {
    return render(format, {.json = [&] {
                               return json{{"state", core::to_string(v.state)},
                                           {"exit_code", core::exit_code(v.state)},
                                           {"what", v.what},
                                           {"summary", v.summary},
                                           {"line", nagios_line(v)}}
                                          .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                      "\n";
                           },
                           .nagios = [&] { return nagios_line(v) + "\n"; }});
}

core::collective_spec collective_check_spec(collective_options o, const option_given& given) {
    if (o.ops.find(',') != std::string::npos)
        throw client_error(exit_usage, fmt::format("--collective {}: give one op (a check judges one figure)", o.ops));
    if (o.sizes.find(',') != std::string::npos || o.sizes.find("..") != std::string::npos)
        throw client_error(exit_usage, fmt::format("--size {}: give one size (a check judges one figure)", o.sizes));
    o.verify = true;
    auto built = build_collective_spec(o, given);
    return std::move(built.spec);
}

namespace {

/// The limits of check --collective: --min-busbw, and the busbw of --baseline FILE's point of
/// the same op, algorithm, ranks and size. Throws client_error (usage) or core::spec_error.
collective_limits collective_check_limits(const collective_check_options& o, const core::collective_spec& spec) {
    collective_limits limits;
    if (o.min_busbw) {
        if (!(*o.min_busbw > 0 && std::isfinite(*o.min_busbw)))
            throw client_error(exit_usage, fmt::format("--min-busbw {}: give the least busbw in GB/s, a number > 0", *o.min_busbw));
        limits.min_busbw = o.min_busbw;
    }
    if (!o.baseline.empty()) {
        if (o.baseline == "stored")
            throw client_error(exit_usage, "--collective: --baseline stored is for a path; give a collective result file "
                                           "(meshperf collective --format json -o FILE)");
        core::validate_fractions(o.warn, o.crit);
        std::tie(limits.baseline_busbw, limits.baseline_source) = collective_baseline(read_json_file(o.baseline), o.baseline, spec);
        limits.warn = o.warn;
        limits.crit = o.crit;
    }
    core::validate(o.counters);
    limits.counters = o.counters;
    limits.judge_counters = !o.ignore_counters;
    if (!limits.min_busbw && !limits.baseline_busbw)
        throw client_error(exit_usage, "--collective needs --min-busbw X (the least busbw in GB/s) and/or --baseline FILE "
                                       "(a collective result)");
    return limits;
}

}  // namespace

int run_collective_check(const collective_check_options& o, const std::string& token_file, const transport::tls_files& tls) {
    std::mutex m;
    bool reported = false;
    const auto report = [&](const collective_verdict& v) {
        std::lock_guard lock(m);
        bool written = true;
        if (!reported) {
            const auto text = render_collective_check(v, o.format);
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
            written = write_textfile(o.prom_file, [&](double now) { return collective_check_textfile(v, now); });
        }
        reported = true;
        return core::exit_code(written ? v.state : core::check_state::unknown);
    };
    // Of the options build_collective_spec asks about, check has --algo only.
    const auto given = [&](std::string_view name) { return name == "--algo" && o.algo_given; };
    collective_check_labels labels{o.collective.ops, "", o.collective.transport, o.collective.memory};  // until the spec is built
    core::collective_spec spec;
    collective_limits limits;
    credentials creds;
    try {
        if (!o.peer.empty()) throw client_error(exit_usage, "--collective takes --hosts, not a peer");
        if (!o.hosts_given) throw client_error(exit_usage, "--collective needs --hosts FILE or a comma list of the daemons");
        check_timeout(o.timeout_s);
        if (const auto bad = prom_file_problem(o.prom_file); !bad.empty()) throw client_error(exit_usage, bad);
        spec = collective_check_spec(o.collective, given);
        labels = collective_check_labels_of(spec);
        limits = collective_check_limits(o, spec);
        creds = client_credentials(token_file, tls);
    } catch (const std::exception& e) {  // client_error, and core::spec_error of check_timeout and the baseline
        return report(unknown_collective(labels, fmt::format("bad options: {}", e.what())));
    }
    return run_with_deadline(
        o.timeout_s,
        [&] {
            try {
                const auto out = run_collective(spec, creds, {});
                return report(judge_collective(out.run, limits));
            } catch (const std::exception& e) {
                return report(unknown_collective(labels, e.what()));
            }
        },
        [&] {
            return report(unknown_collective(labels, fmt::format("no verdict within --timeout {} s (a daemon hung?)", o.timeout_s)));
        });
}

}  // namespace meshperf::client
