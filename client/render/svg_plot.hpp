#pragma once
/// SVG plots of sweeps: one-way latency and bandwidth against message size on log axes,
/// several runs overlaid, each with its fitted model as a dashed line, drawn with the
/// panels of svg_panel.hpp. Pure string output (the SVG's form: svg.hpp).
#include "client/render/svg.hpp"
#include "analysis/model.hpp"
#include "core/result.hpp"

#include <optional>
#include <span>
#include <string>

namespace meshperf::client {

/// One run to draw.
struct plot_run {
    std::string label;                     ///< legend text; empty: run_label(run)
    core::run_result run;
    std::optional<analysis::model_fit> model;  ///< drawn as a dashed line in the run's colour
};

struct plot_options {
    std::string title;                     ///< empty: derived from the runs
    unsigned width = 960;                  ///< px
    unsigned panel_height = 360;           ///< px, one panel including its axes
    bool latency = true;                   ///< draw the latency panel
    bool bandwidth = true;                 ///< draw the bandwidth panel
    bool percentile_band = true;           ///< shade one-way latency p50..p99
};

/// Legend label of a run: "initiator → peer (transport)", host names where known and
/// different, else the addresses (host:port).
std::string run_label(const core::run_result&);

/// `opt` with only the panels some run has points for: no empty bandwidth panel for
/// latency-only runs, no empty latency panel for bandwidth-only runs. Without any points
/// both stay, each saying so.
plot_options measured_panels(std::span<const core::run_result> runs, plot_options opt = {});
plot_options measured_panels(std::span<const plot_run> runs, plot_options opt = {});

/// Renders one-way latency (p50, in µs or ms) and bandwidth (Gbit/s) against message size
/// (log₂ axis, IEC ticks) as two panels stacked in one SVG, with gridlines, a shared
/// legend and the models' α, β in it. A panel without points says so. Figures that are not
/// positive and finite cannot sit on a log axis: they are left out and a note counts them.
std::string render_sweep_svg(std::span<const plot_run> runs, const plot_options& = {});

/// One run; its model is fitted here (and left out when the fit fails).
std::string render_sweep_svg(const core::run_result& run, const plot_options& = {});

}  // namespace meshperf::client
