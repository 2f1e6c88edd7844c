#pragma once
/// The panels meshperf's SVG plots are made of (client/render/svg_plot.cpp: sweeps,
/// client/render/svg_collective.cpp: collectives): a log-log plot area over message sizes (IEC
/// ticks, powers of two) with measured series (markers and lines, an optional shaded band),
/// dashed model or prediction curves, and a wrapping legend. Pure string output.
#include "client/render/svg.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshperf::client::plot {

/// A point: x a message size in bytes, y the panel's figure.
struct xy {
    double x, y;
};

struct series {
    std::size_t style = 0;
    std::vector<xy> points;   // sorted by x
    std::vector<xy> band_hi;  // upper edge of a shaded band over points; empty: none
    bool hollow = false;      // open markers, dotted line (bidirectional)
};

struct curve {
    std::size_t style = 0;
    std::vector<xy> points;
};

struct panel {
    std::string title, y_label, empty_text;
    std::vector<series> data;
    std::vector<curve> models;
    std::vector<std::pair<double, std::size_t>> breaks;  // (size, style) of piecewise breaks
};

struct legend_entry {
    std::size_t style;
    std::string label, note;
    bool hollow;
};

/// True for figures a log axis can show: finite and > 0.
bool plottable(double v);
/// The colour of series style `style` (series_palette, cycling).
std::string_view colour_of(std::size_t style);

/// One panel at `top`, `width` × `height` px, over sizes [x_lo, x_hi]: its title, plot
/// area, axes, then bands, measured lines, model curves over them and markers over all.
void draw_panel(std::string& out, const panel& p, double x_lo, double x_hi, double top, double width, double height);

/// Lays out legend entries left to right, wrapping; returns the height used (draw false:
/// measures only).
double draw_legend(std::string& out, const std::vector<legend_entry>& entries, double top, double width, bool draw);

}  // namespace meshperf::client::plot
