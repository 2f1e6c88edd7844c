#pragma once
/// SVG heatmap of a cluster matrix: one cell per directed link (row sends, column
/// receives), coloured by bandwidth or latency on the viridis scale (perceptually uniform,
/// colour-blind safe), bad links outlined and flagged, unreachable links crossed out,
/// suspect hosts named. Pure string output, same conventions as svg.hpp (no
/// <style>, no ids: safe to inline several in one HTML page).
#include "analysis/outliers.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::client {

/// What to draw. All matrices are indexed [from][to] and are either empty or N×N.
struct heatmap_data {
    std::string title;                                       ///< e.g. "Bandwidth, 16 hosts"
    std::string unit;                                        ///< "Gbit/s", "µs", ...
    std::vector<std::string> hosts;                          ///< N names, rows and columns
    std::vector<std::vector<std::optional<double>>> values;  ///< absent: not measured
    std::vector<std::vector<bool>> bad;                      ///< outlined and marked "!"
    std::vector<std::vector<bool>> unreachable;              ///< grey with a cross
    std::vector<bool> suspect;                               ///< N flags: names marked
    /// Why a bad link is bad, one text per cell (empty or N×N; "" for none): the outline's
    /// tooltip (an SVG <title>), so the heatmap says a fast link is bad for its counters.
    std::vector<std::vector<std::string>> why_bad;
    bool higher_is_better = true;  ///< bandwidth true, latency false: good is always the bright end
};

struct heatmap_options {
    unsigned max_width = 1100;     ///< px; cells shrink to fit (6 px at least)
    bool show_values = true;       ///< numbers in cells that are large enough
};

/// Renders the heatmap. Throws core::spec_error when a matrix is not N×N (or empty), when
/// suspect is not N long (or empty), or when there are no hosts. Values that are not finite
/// are drawn as not measured.
std::string render_heatmap_svg(const heatmap_data&, const heatmap_options& = {});

/// Which figure of a judged matrix to draw.
enum class heatmap_metric { bandwidth, latency };

/// The heatmap of a judged matrix (analysis/outliers.hpp): values, bad and unreachable links,
/// suspect hosts. host_names must be analysis.host_count long, or empty (hosts by index).
heatmap_data heatmap_from_analysis(const analysis::matrix_analysis&, std::span<const std::string> host_names,
                                   heatmap_metric);

/// The viridis colour at t in [0, 1] (clamped), as "#rrggbb".
std::string viridis(double t);

}  // namespace meshperf::client
