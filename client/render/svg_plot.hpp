#pragma once
/// SVG plots of sweeps: one-way latency and bandwidth against message size on log axes,
/// several runs overlaid, each with its fitted model as a dashed line. Pure string output.
///
/// The SVG has no XML declaration, no <style> and no id attributes, so it can be written to
/// a file as it is or inlined into HTML, several to a page, without clashes.
#include "analysis/model.hpp"
#include "core/result.hpp"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace meshperf::client {

/// Escapes text for XML content and attribute values (& < > " ').
std::string xml_escape(std::string_view text);

/// Series colours: the Okabe–Ito palette, safe for the common colour-vision deficiencies,
/// in drawing order (yellow, the weakest on white, is left out).
inline constexpr std::array<std::string_view, 7> series_palette{
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};

/// Font stack used by every meshperf SVG.
inline constexpr std::string_view svg_font_family = "'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif";

/// Building blocks shared by meshperf's SVG renderers (plots, heatmap, report).
namespace svg {
/// A coordinate with one decimal; a non-finite value becomes 0, so no NaN reaches the SVG.
std::string num(double v);
/// Code points in UTF-8 text, and its approximate rendered width in px (sans-serif).
std::size_t text_columns(std::string_view s);
double text_width(std::string_view s, double font_px);
/// Appends <text> with escaped content; extra is raw attributes ("fill=\"#222\"").
void text(std::string& out, double x, double y, std::string_view content, double font_px, std::string_view anchor,
          std::string_view extra = {});
/// Appends a marker of shape style % 5 (circle, square, triangle, diamond, inverted
/// triangle): filled with a white edge, or hollow.
void marker(std::string& out, std::size_t style, double x, double y, std::string_view colour, bool hollow);
/// The opening <svg> element with a <title> and a white background.
std::string open_svg(double width, double height, std::string_view title);
}  // namespace svg

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
