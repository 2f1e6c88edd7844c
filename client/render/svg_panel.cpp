#include "client/render/svg_panel.hpp"
#include "core/figure_text.hpp"

#include "core/sizes.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace meshperf::client::plot {

using svg::num;

namespace {

// Maps a positive domain [lo, hi] logarithmically onto pixels [a, b].
struct log_axis {
    double lo = 1, hi = 10, a = 0, b = 1;
    double operator()(double v) const {
        return a + (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) * (b - a);
    }
};

struct tick {
    double v;
    std::string label;  // empty: a minor gridline
};

// Powers of two between lo and hi; labelled every `step` octaves, with steps that divide 10
// so that 1 KiB, 1 MiB and 1 GiB get labels.
std::vector<tick> size_ticks(double lo, double hi, double px) {
    const int e0 = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int e1 = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    const int max_labels = std::max(2, static_cast<int>(px / 64));
    int step = 1;
    for (int s : {1, 2, 5, 10}) {
        step = s;
        if ((e1 - e0) / s + 1 <= max_labels) break;
    }
    std::vector<tick> ticks;
    for (int e = std::max(e0, 0); e <= e1; ++e) {
        const auto v = std::ldexp(1.0, e);
        ticks.push_back({v, e % step == 0 ? core::format_size(static_cast<std::uint64_t>(v)) : std::string()});
    }
    // The largest size always has its label (the last measured size of a 1K..32M sweep had
    // none); it takes the place of the label before it, which would crowd it.
    if (!ticks.empty() && ticks.back().label.empty()) {
        for (auto it = ticks.rbegin(); it != ticks.rend(); ++it)
            if (!it->label.empty()) {
                it->label.clear();
                break;
            }
        ticks.back().label = core::format_size(static_cast<std::uint64_t>(ticks.back().v));
    }
    return ticks;
}

std::string value_label(double v) {
    if (v >= 1e6) return fmt::format("{}M", core::plain_number(v / 1e6, 6));
    if (v >= 1e4) return fmt::format("{}k", core::plain_number(v / 1e3, 6));
    return fmt::format("{}", core::plain_number(v, 6));
}

// 1·10^d ticks; 1, 2, 5·10^d or 1..9·10^d when the range is short. Unlabelled ticks are
// minor gridlines.
std::vector<tick> value_ticks(double lo, double hi, double px) {
    const int max_labels = std::max(3, static_cast<int>(px / 32));
    const int d0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
    const int d1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
    auto in_range = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
    auto gather = [&](std::initializer_list<int> mantissas) {
        std::vector<tick> t;
        for (int d = d0; d <= d1; ++d)
            for (int m : mantissas) {
                const double v = m * std::pow(10.0, d);
                if (in_range(v)) t.push_back({v, value_label(v)});
            }
        return t;
    };
    auto decades = gather({1});
    if (decades.size() >= 3) {
        // Thin labels when there are many decades; the others stay as gridlines.
        const std::size_t step = (decades.size() + max_labels - 1) / max_labels;
        for (std::size_t i = 0; i < decades.size(); ++i)
            if (i % step) decades[i].label.clear();
        auto minor = gather({2, 3, 4, 5, 6, 7, 8, 9});
        if (decades.size() <= 6)
            for (auto& m : minor) decades.push_back({m.v, ""});
        return decades;
    }
    auto coarse = gather({1, 2, 5});
    if (coarse.size() >= 3 && coarse.size() <= static_cast<std::size_t>(max_labels)) {
        for (auto& m : gather({3, 4, 6, 7, 8, 9})) coarse.push_back({m.v, ""});
        return coarse;
    }
    auto fine = gather({1, 2, 3, 4, 5, 6, 7, 8, 9});
    if (fine.size() >= 2) return fine;
    // A range inside one mantissa step: label both ends.
    return {{lo, fmt::format("{}", core::plain_number(lo, 3))}, {hi, fmt::format("{}", core::plain_number(hi, 3))}};
}

/// A panel's plot area in px, and its axes onto it (x: size, y: the panel's figure).
struct panel_frame {
    double left, right, top, bottom;
    log_axis xa, ya;
};

/// The y range of a panel's points, bands and model curves, padded so that nothing sits on
/// the edge (and a flat range spans ×1.5 either way); nullopt when nothing is plottable.
std::optional<std::pair<double, double>> panel_y_range(const panel& p) {
    double y_lo = INFINITY, y_hi = 0;
    auto widen = [&](double v) {
        if (!plottable(v)) return;
        y_lo = std::min(y_lo, v);
        y_hi = std::max(y_hi, v);
    };
    for (const auto& s : p.data) {
        for (auto q : s.points) widen(q.y);
        for (auto q : s.band_hi) widen(q.y);
    }
    for (const auto& c : p.models)
        for (auto q : c.points) widen(q.y);
    if (!(y_hi > 0)) return std::nullopt;
    if (y_hi / y_lo < 1.5) {
        const double mid = std::sqrt(y_lo * y_hi);
        return std::pair{mid / 1.5, mid * 1.5};
    }
    return std::pair{y_lo / 1.25, y_hi * 1.25};
}

/// The grey frame around a plot area: a rectangle from (left, top) to (right, bottom).
void draw_frame(std::string& out, double left, double top, double right, double bottom) {
    fmt::format_to(std::back_inserter(out),
                   R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888888" stroke-width="1"/>)", num(left),
                   num(top), num(right - left), num(bottom - top));
    out += '\n';
}

/// Gridlines with their tick labels (IEC sizes below, values left), and both axis titles.
void draw_axes(std::string& out, const panel& p, const panel_frame& f) {
    for (const auto& t : size_ticks(f.xa.lo, f.xa.hi, f.right - f.left)) {
        const double x = f.xa(t.v);
        fmt::format_to(std::back_inserter(out), R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1"/>)",
                       num(x), num(f.top), num(x), num(f.bottom), t.label.empty() ? "#ececec" : "#d4d4d4");
        out += '\n';
        if (!t.label.empty()) svg::text(out, x, f.bottom + 19, t.label, 12.5, "middle", R"(fill="#333333")");
    }
    for (const auto& t : value_ticks(f.ya.lo, f.ya.hi, f.bottom - f.top)) {
        const double y = f.ya(t.v);
        fmt::format_to(std::back_inserter(out), R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1"/>)",
                       num(f.left), num(y), num(f.right), num(y), t.label.empty() ? "#ececec" : "#d4d4d4");
        out += '\n';
        if (!t.label.empty()) svg::text(out, f.left - 8, y + 4.5, t.label, 12.5, "end", R"(fill="#333333")");
    }
    svg::text(out, (f.left + f.right) / 2, f.bottom + 44, "message size (bytes; IEC units, 1 KiB = 1024 B)", 13.5, "middle",
              R"(fill="#222222")");
    svg::text(out, 0, 0, p.y_label, 13.5, "middle",
              fmt::format(R"svg(fill="#222222" transform="translate({} {}) rotate(-90)")svg", num(22), num((f.top + f.bottom) / 2)));
}

/// Appends "x,y " in px for every point of [first, last).
template <class It>
void append_points(std::string& pts, It first, It last, const panel_frame& f) {
    for (; first != last; ++first) pts += num(f.xa(first->x)) + "," + num(f.ya(first->y)) + " ";
}

/// The points attribute of a line through `line` (two points at least).
std::string points_attribute(const std::vector<xy>& line, const panel_frame& f) {
    std::string pts;
    append_points(pts, line.begin(), line.end(), f);
    pts.pop_back();
    return pts;
}

/// The shaded p50..p99 bands, under everything else.
void draw_bands(std::string& out, const panel& p, const panel_frame& f) {
    for (const auto& s : p.data) {
        if (s.band_hi.size() != s.points.size() || s.points.size() < 2) continue;
        std::string pts;
        append_points(pts, s.band_hi.begin(), s.band_hi.end(), f);
        append_points(pts, s.points.rbegin(), s.points.rend(), f);
        pts.pop_back();
        fmt::format_to(std::back_inserter(out), R"(<polygon points="{}" fill="{}" fill-opacity="0.16" stroke="none"/>)", pts,
                       colour_of(s.style));
        out += '\n';
    }
}

/// Lines through the measured points: fainter where model curves are drawn over them.
void draw_measured_lines(std::string& out, const panel& p, const panel_frame& f) {
    for (const auto& s : p.data) {
        if (s.points.size() < 2) continue;
        fmt::format_to(std::back_inserter(out),
                       R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-opacity="{}"{}/>)",
                       points_attribute(s.points, f), colour_of(s.style), p.models.empty() ? 2.2 : 1.4,
                       p.models.empty() ? 1.0 : 0.6, s.hollow ? R"( stroke-dasharray="2 4" stroke-linecap="round")" : "");
        out += '\n';
    }
}

/// The fitted models (dashed) and their piecewise breaks (dotted, labelled).
void draw_models(std::string& out, const panel& p, const panel_frame& f) {
    for (const auto& c : p.models) {
        if (c.points.size() < 2) continue;
        fmt::format_to(std::back_inserter(out),
                       R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2.2" stroke-dasharray="8 5"/>)",
                       points_attribute(c.points, f), colour_of(c.style));
        out += '\n';
    }
    for (auto [n, style] : p.breaks) {
        if (!(n > f.xa.lo && n < f.xa.hi)) continue;
        fmt::format_to(std::back_inserter(out),
                       R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.2" stroke-dasharray="2 3"/>)",
                       num(f.xa(n)), num(f.top), num(f.xa(n)), num(f.bottom), colour_of(style));
        out += '\n';
        svg::text(out, f.xa(n) + 4, f.top + 14, "break", 11.5, "start", fmt::format(R"(fill="{}")", colour_of(style)));
    }
}

}  // namespace

bool plottable(double v) { return std::isfinite(v) && v > 0; }

std::string_view colour_of(std::size_t style) { return series_palette[style % series_palette.size()]; }

/// One panel at `top`, `width` × `height` px, over sizes [x_lo, x_hi]: its title, plot
/// area, axes, then bands, measured lines, model curves over them and markers over all.
void draw_panel(std::string& out, const panel& p, double x_lo, double x_hi, double top, double width, double height) {
    const double left = 86, right = width - 28, ptop = top + 34, pbottom = top + height - 56;
    svg::text(out, left, top + 22, p.title, 15, "start", R"(font-weight="bold" fill="#222222")");
    const auto y_range = panel_y_range(p);
    out += "<g>\n";
    fmt::format_to(std::back_inserter(out), R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#fbfbfb" stroke="none"/>)",
                   num(left), num(ptop), num(right - left), num(pbottom - ptop));
    out += '\n';
    if (!y_range) {
        svg::text(out, (left + right) / 2, (ptop + pbottom) / 2, p.empty_text, 14, "middle", R"(fill="#666666")");
    } else {
        const panel_frame f{left, right, ptop, pbottom, {x_lo, x_hi, left, right}, {y_range->first, y_range->second, pbottom, ptop}};
        draw_axes(out, p, f);
        draw_bands(out, p, f);
        draw_measured_lines(out, p, f);
        draw_models(out, p, f);
        for (const auto& s : p.data)
            for (auto q : s.points) svg::marker(out, s.style, f.xa(q.x), f.ya(q.y), colour_of(s.style), s.hollow);
    }
    draw_frame(out, left, ptop, right, pbottom);
    out += "</g>\n";
}

// Lays out entries left to right, wrapping; returns the height used.
double draw_legend(std::string& out, const std::vector<legend_entry>& entries, double top, double width, bool draw) {
    const double left = 86, right = width - 28, row_h = 22, font = 13;
    double x = left, y = top + 14;
    for (const auto& e : entries) {
        const double w = 34 + svg::text_width(e.label, font) + (e.note.empty() ? 0 : 8 + svg::text_width(e.note, 12)) + 26;
        if (x > left && x + w > right) {
            x = left;
            y += row_h;
        }
        if (draw) {
            fmt::format_to(std::back_inserter(out), R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2.2"{}/>)",
                           num(x), num(y), num(x + 26), num(y), colour_of(e.style),
                           e.hollow ? R"( stroke-dasharray="2 4" stroke-linecap="round")" : "");
            out += '\n';
            svg::marker(out, e.style, x + 13, y, colour_of(e.style), e.hollow);
            svg::text(out, x + 34, y + 4.5, e.label, font, "start", R"(fill="#222222")");
            if (!e.note.empty())
                svg::text(out, x + 34 + svg::text_width(e.label, font) + 8, y + 4.5, e.note, 12, "start", R"(fill="#555555")");
        }
        x += w;
    }
    return y - top + row_h - 6;
}
}  // namespace meshperf::client::plot
