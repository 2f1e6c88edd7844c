#pragma once
/// One self-contained HTML page for runs and matrices: inline CSS, inline SVG (plots from
/// svg_plot.hpp, heatmaps from svg_heatmap.hpp), no scripts and no external assets, so it
/// can be mailed, attached to a ticket or opened offline. Pure string output.
#include "client/support/result_files.hpp"
#include "analysis/model.hpp"
#include "core/collective/result.hpp"
#include "core/result.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::client {

/// A collective run to report, with its predicted times where it has them (one entry per
/// point, or empty).
struct report_collective {
    core::collective_result run;
    std::vector<std::optional<double>> predicted_time_s;
};

struct report_options {
    std::string title = "meshperf report";
    std::string generated_at;              ///< shown under the title when set (RFC 3339)
    bool plots = true;                     ///< inline SVG plots and heatmaps
    bool point_tables = true;              ///< a table of every measured point
    analysis::model_options model;             ///< fit options for each run's model
};

/// Renders the report: for several runs an overview plot of all of them; for each run its
/// hosts and spec, warnings and error, the fitted model (α, β, n½, R², worst residual,
/// piecewise break) or why there is none, its plot and its points; for each matrix the
/// bandwidth and latency heatmaps, the medians and thresholds, the bad links, suspect and
/// unreachable hosts; for each collective run its ranks, state, error and warnings, its time
/// and busbw plot (client/render/svg_collective.hpp) and its points as nccl-tests' columns with the
/// prediction's error. Every string from the inputs is escaped.
std::string render_html_report(std::span<const core::run_result> runs, std::span<const report_matrix> matrices = {},
                               const report_options& = {}, std::span<const report_collective> collectives = {});

}  // namespace meshperf::client
