#include "client/render/collective.hpp"
#include "core/json_text.hpp"

#include "client/render/figure_text.hpp"
#include "client/render/table.hpp"
#include "core/sizes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

std::string us(double seconds) { return significant_text(seconds * 1e6, 4); }
std::string fig(double v) { return significant_text(v, 3); }
std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string host_of(const core::collective_result& run, unsigned rank) {
    if (rank < run.hosts.size() && !run.hosts[rank].address.empty()) return run.hosts[rank].address;
    return rank < run.spec.hosts.size() ? run.spec.hosts[rank] : std::string("?");
}

/// The header of one op's table: nccl-tests' columns, then ours.
std::vector<std::string> header(bool incast, bool predicted) {
    std::vector<std::string> h{"size", "count", "type", "redop", "time (µs)", "algbw (GB/s)", "busbw (GB/s)", "#wrong",
                               "spread (max/min)", "slowest rank"};
    if (incast) h.insert(h.end(), {"total Gbit/s", "fairness", "per-sender Gbit/s"});
    else h.insert(h.end(), {"slowest link", "link Gbit/s"});
    if (predicted) h.insert(h.end(), {"predicted (µs)", "pred. busbw", "error"});
    return h;
}

std::vector<std::string> row(const core::collective_point& p, const std::optional<point_prediction>* pred) {
    std::vector<std::string> r{std::to_string(p.size_bytes), std::to_string(p.count), std::string(core::to_string(p.element)),
                               std::string(core::redop_name(p.op)), us(p.time_s), fig(p.algbw_gbyte_per_s),
                               fig(p.busbw_gbyte_per_s), p.wrong ? std::to_string(*p.wrong) : "N/A",
                               fmt::format("{:.2f}", p.spread.max_over_min), std::to_string(p.slowest_rank)};
    if (p.incast) {
        std::vector<std::string> senders;
        for (double g : p.incast->sender_gbit_per_s) senders.push_back(fig(g));
        r.insert(r.end(), {fig(p.incast->total_gbit_per_s), fmt::format("{:.3f}", p.incast->fairness),
                           fmt::format("{}", fmt::join(senders, " "))});
    } else if (p.slowest_link) {
        r.insert(r.end(), {core::to_string(*p.slowest_link), fig(p.slowest_link->gbit_per_s)});
    } else {
        r.insert(r.end(), {"-", "-"});
    }
    if (pred) {
        if (*pred) r.insert(r.end(), {us((*pred)->time_s), fig((*pred)->busbw_gbyte_per_s), percent((*pred)->error)});
        else r.insert(r.end(), {"-", "-", "-"});
    }
    return r;
}

std::string op_header(const core::collective_result& run, const core::collective_point& p) {
    return fmt::format("\n{}  {}  {} ranks  {}  memory {}{}\n", core::to_string(p.op), core::to_string(p.algo), p.ranks,
                       run.spec.transport, run.spec.memory,
                       p.op == core::collective_op::incast ? fmt::format("  (ranks 1..{} -> rank {})", p.ranks - 1, core::incast_receiver)
                                                           : "");
}

std::string run_header(const core::collective_result& run) {
    std::string out = fmt::format("collective {}  {}  {} ranks  coordinator {}\n", run.id, run.state.text(), run.spec.hosts.size(),
                                  core::coordinator_of(run.spec));
    std::vector<std::string> ranks;
    for (unsigned r = 0; r < run.spec.hosts.size(); ++r) {
        const auto name = r < run.hosts.size() && !run.hosts[r].hostname.empty() ? " (" + run.hosts[r].hostname + ")" : "";
        ranks.push_back(fmt::format("{} {}{}", r, host_of(run, r), name));
    }
    out += fmt::format("ranks: {}\n", fmt::join(ranks, ", "));
    const auto length = run.spec.iterations ? fmt::format("{} iterations", *run.spec.iterations)
                                            : fmt::format("{} s", core::plain_number(run.spec.duration_s.value_or(0), 6));
    out += fmt::format("{} per size after {} warm-up, {}{}\n", length, run.spec.warmup_iterations,
                       core::to_string(run.spec.element), run.spec.verify ? ", verified" : "");
    return out;
}

}  // namespace

std::string render_collective_table(const core::collective_result& run, const run_predictions& preds) {
    std::string out = run_header(run);
    const bool predicted = !preds.points.empty();
    std::vector<std::vector<std::string>> rows;
    const auto flush = [&] {
        if (rows.size() > 1) out += format_table(rows);
        rows.clear();
    };
    for (std::size_t i = 0; i < run.points.size(); ++i) {
        const auto& p = run.points[i];
        if (i == 0 || p.op != run.points[i - 1].op) {
            flush();
            out += op_header(run, p);
            rows.push_back(header(p.op == core::collective_op::incast, predicted));
        }
        rows.push_back(row(p, predicted && i < preds.points.size() ? &preds.points[i] : nullptr));
    }
    flush();
    if (run.points.empty()) out += "\n(no points)\n";
    if (predicted) {
        out += "\nerror = (measured - predicted) / predicted: positive when the run was slower than the model\n";
        for (const auto& l : preds.lines) out += l + "\n";
    }
    if (!run.warnings.empty()) {
        out += "\nwarnings:\n";
        for (const auto& w : run.warnings) out += "  - " + w + "\n";
    }
    if (!run.error.empty()) out += fmt::format("\nerror: {}\n", run.error);
    return out;
}

std::string render_collective_csv(const core::collective_result& run, const run_predictions& preds) {
    const bool predicted = !preds.points.empty();
    std::string out = core::collective_csv_header() +
                      (predicted ? ",predicted_time_us,predicted_busbw_gbyte_per_s,prediction_error" : "") + "\n";
    for (std::size_t i = 0; i < run.points.size(); ++i) {
        out += core::to_csv_row(run, run.points[i]);
        if (predicted) {
            const auto* pp = i < preds.points.size() && preds.points[i] ? &*preds.points[i] : nullptr;
            out += pp ? fmt::format(",{},{},{}", core::plain_number(pp->time_s * 1e6, 6), core::plain_number(pp->busbw_gbyte_per_s, 6),
                                    core::plain_number(pp->error, 6))
                      : std::string(",,,");  // not modelled
        }
        out += "\n";
    }
    return out;
}

std::string render_collective(output_format format, const core::collective_result& run, const json& doc,
                              const run_predictions& preds) {
    return render(format, {.table = [&] { return render_collective_table(run, preds); },
                           .json = [&] { return core::json_text(doc, 2) + "\n"; },
                           .csv = [&] { return render_collective_csv(run, preds); }});
}

std::string collective_progress_line(const core::collective_point& p, std::size_t index, std::size_t total) {
    return fmt::format("[{:>3}/{}] {} {} {:>9}  {} µs  busbw {} GB/s", index, total, core::to_string(p.op),
                       core::to_string(p.algo), core::format_size(p.size_bytes), us(p.time_s), fig(p.busbw_gbyte_per_s));
}

}  // namespace meshperf::client
