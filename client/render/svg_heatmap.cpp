#include "client/render/svg_heatmap.hpp"
#include "core/figure_text.hpp"

#include "client/render/svg.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

namespace {

using svg::num;

struct rgb {
    double r, g, b;
};

// viridis (matplotlib) at nine evenly spaced stops
constexpr std::array<rgb, 9> viridis_stops{{{0x44, 0x01, 0x54},
                                            {0x48, 0x28, 0x78},
                                            {0x3e, 0x49, 0x89},
                                            {0x31, 0x68, 0x8e},
                                            {0x26, 0x82, 0x8e},
                                            {0x1f, 0x9e, 0x89},
                                            {0x35, 0xb7, 0x79},
                                            {0x6e, 0xce, 0x58},
                                            {0xfd, 0xe7, 0x25}}};

rgb viridis_rgb(double t) {
    if (!std::isfinite(t)) t = 0;
    t = std::clamp(t, 0.0, 1.0) * (viridis_stops.size() - 1);
    const auto i = std::min(static_cast<std::size_t>(t), viridis_stops.size() - 2);
    const double f = t - static_cast<double>(i);
    const auto& a = viridis_stops[i];
    const auto& b = viridis_stops[i + 1];
    return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::string hex(const rgb& c) {
    auto q = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
    return fmt::format("#{:02x}{:02x}{:02x}", q(c.r), q(c.g), q(c.b));
}

// Relative luminance, to pick a readable text colour on a cell.
double luminance(const rgb& c) { return (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0; }

std::string ellipsize(const std::string& s, std::size_t max_cols) {
    if (svg::text_columns(s) <= max_cols) return s;
    std::string out;
    std::size_t cols = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80 && ++cols > max_cols - 1) break;
        out += s[i];
    }
    return out + "…";
}

template <class T>
void check_square(const std::vector<std::vector<T>>& m, std::size_t n, const char* what) {
    if (m.empty()) return;
    if (m.size() != n)
        throw core::spec_error(fmt::format("heatmap: {} has {} rows for {} hosts", what, m.size(), n));
    for (const auto& row : m)
        if (row.size() != n)
            throw core::spec_error(fmt::format("heatmap: {} has a row of {} for {} hosts", what, row.size(), n));
}

template <class T>
T at(const std::vector<std::vector<T>>& m, std::size_t i, std::size_t j, T fallback) {
    return m.empty() ? fallback : m[i][j];
}

std::string value_text(double v) {
    if (v >= 1e4) return fmt::format("{:.0f}", v);
    return fmt::format("{}", core::plain_number(v, 3));
}

}  // namespace

std::string viridis(double t) { return hex(viridis_rgb(t)); }

namespace {

void check_shapes(const heatmap_data& d) {
    const std::size_t n = d.hosts.size();
    if (n == 0) throw core::spec_error("heatmap: no hosts");
    check_square(d.values, n, "values");
    check_square(d.bad, n, "bad");
    check_square(d.unreachable, n, "unreachable");
    if (!d.suspect.empty() && d.suspect.size() != n)
        throw core::spec_error(fmt::format("heatmap: {} suspect flags for {} hosts", d.suspect.size(), n));
}

/// The colour scale's ends: the finite values' range, widened when all are equal.
struct value_range {
    double lo = INFINITY, hi = -INFINITY;
    bool have_values() const { return hi >= lo; }
    /// Position of v on the scale, 0..1, bright end good.
    double t(double v, bool higher_is_better) const {
        const double x = (v - lo) / (hi - lo);
        return higher_is_better ? x : 1 - x;
    }
};

value_range finite_range(const heatmap_data& d) {
    value_range r;
    const std::size_t n = d.hosts.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (auto v = at(d.values, i, j, std::optional<double>{}); v && std::isfinite(*v)) {
                r.lo = std::min(r.lo, *v);
                r.hi = std::max(r.hi, *v);
            }
    if (r.have_values() && r.hi == r.lo) {
        r.lo = r.lo * 0.9;
        r.hi = r.hi * 1.1 + (r.hi == 0 ? 1 : 0);
    }
    return r;
}

/// Where everything goes: row names on the left, column names rotated above, the scale on
/// the right.
struct heatmap_layout {
    static constexpr double label_font = 12.5;
    static constexpr double scale_w = 190;
    static constexpr double title_h = 64;
    static constexpr double key_h = 120;
    std::vector<std::string> names;  ///< ellipsized, suspects flagged
    double left = 0, cell = 0, grid = 0, top = 0, scale_h = 0, width = 0, height = 0;
    bool steep = false;         ///< column names upright (cells too narrow for −45°)
    bool names_shown = false;
    bool values_shown = false;

    double x(std::size_t column) const { return left + cell * static_cast<double>(column); }
    double y(std::size_t row) const { return top + cell * static_cast<double>(row); }
};

heatmap_layout make_layout(const heatmap_data& d, const heatmap_options& opt) {
    heatmap_layout l;
    const std::size_t n = d.hosts.size();
    std::size_t name_cols = 1;
    for (std::size_t i = 0; i < n; ++i) {
        const bool suspect = !d.suspect.empty() && d.suspect[i];
        l.names.push_back(ellipsize(d.hosts[i], 28) + (suspect ? " ⚑" : ""));
        name_cols = std::max(name_cols, svg::text_columns(l.names.back()));
    }
    const double name_w = static_cast<double>(name_cols) * heatmap_layout::label_font * 0.6 + 12;
    l.left = 24 + name_w;
    const double max_w = std::max(400u, opt.max_width);
    l.cell = std::clamp((max_w - l.left - heatmap_layout::scale_w - 24) / static_cast<double>(n), 6.0, 56.0);
    l.grid = l.cell * static_cast<double>(n);
    // Column names at −45° when cells are wide enough for them not to touch, else upright.
    l.steep = l.cell < 20;
    const double col_label_h = name_w * (l.steep ? 1.0 : 0.72) + 16;
    l.top = heatmap_layout::title_h + col_label_h;
    l.scale_h = std::clamp(l.grid, 160.0, 300.0);
    l.width = l.left + l.grid + heatmap_layout::scale_w + 24;
    l.height = l.top + std::max(l.grid, l.scale_h + heatmap_layout::key_h) + 36;
    l.names_shown = l.cell >= 9;
    l.values_shown = opt.show_values && l.cell >= 34;
    return l;
}

void draw_host_names(std::string& out, const heatmap_data& d, const heatmap_layout& l) {
    if (!l.names_shown) return;
    for (std::size_t i = 0; i < l.names.size(); ++i) {
        const bool suspect = !d.suspect.empty() && d.suspect[i];
        const std::string paint = suspect ? R"(fill="#D55E00" font-weight="bold")" : R"(fill="#222222")";
        const double font = std::min(heatmap_layout::label_font, l.cell * 0.8);
        svg::text(out, l.left - 8, l.y(i) + l.cell * 0.5 + font * 0.35, l.names[i], font, "end", paint);
        const double cx = l.x(i) + l.cell * 0.5;
        svg::text(out, 0, 0, l.names[i], font, "start",
                  paint + fmt::format(R"svg( transform="translate({} {}) rotate({})")svg", num(cx + font * 0.35),
                                      num(l.top - 6), l.steep ? -90 : -45));
    }
}

/// How many cells of each kind were drawn, for the key.
struct cell_counts {
    std::size_t bad = 0, unreachable = 0, missing = 0;
};

void draw_cell(std::string& out, const heatmap_data& d, const heatmap_layout& l, const value_range& range, std::size_t i,
               std::size_t j, cell_counts& counts) {
    const double x = l.x(j), y = l.y(i);
    const double cx = x + l.cell / 2, cy = y + l.cell / 2;
    const auto v = at(d.values, i, j, std::optional<double>{});
    const bool bad = at(d.bad, i, j, false);
    std::string fill, mark, mark_colour = "#222222";
    if (i == j) {
        fill = "#e6e6e6";
    } else if (at(d.unreachable, i, j, false)) {
        fill = "#bdbdbd";
        mark = "✕";
        ++counts.unreachable;
    } else if (v && std::isfinite(*v) && range.have_values()) {
        const rgb c = viridis_rgb(range.t(*v, d.higher_is_better));
        fill = hex(c);
        if (l.values_shown) mark = value_text(*v);
        mark_colour = luminance(c) > 0.45 ? "#111111" : "#ffffff";
    } else {
        fill = "#f7f7f7";
        mark = "·";
        mark_colour = "#999999";
        ++counts.missing;
    }
    fmt::format_to(std::back_inserter(out),
                   R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#ffffff" stroke-width="{}"/>)", num(x),
                   num(y), num(l.cell), num(l.cell), fill, l.cell >= 12 ? 1 : 0.5);
    out += '\n';
    if (!mark.empty() && l.cell >= 12)
        svg::text(out, cx, cy + std::min(12.0, l.cell * 0.32) * 0.36, mark, std::min(12.0, l.cell * 0.32), "middle",
                  fmt::format(R"(fill="{}"{})", mark_colour, bad ? R"( font-weight="bold")" : ""));
}

/// Bad links over the cells, so their outlines are not covered by neighbours.
void draw_bad_outlines(std::string& out, const heatmap_data& d, const heatmap_layout& l, cell_counts& counts) {
    const std::size_t n = d.hosts.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j || !at(d.bad, i, j, false)) continue;
            ++counts.bad;
            const double x = l.x(j), y = l.y(i), cell = l.cell;
            const double w = std::max(1.5, std::min(3.0, cell / 10));
            const std::string why = i < d.why_bad.size() && j < d.why_bad[i].size() ? d.why_bad[i][j] : std::string();
            fmt::format_to(std::back_inserter(out),
                           R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#D55E00" stroke-width="{}")",
                           num(x + w / 2), num(y + w / 2), num(cell - w), num(cell - w), num(w));
            out += why.empty() ? "/>" : fmt::format("><title>{} -> {}: {}</title></rect>", xml_escape(d.hosts[i]),
                                                    xml_escape(d.hosts[j]), xml_escape(why));
            out += '\n';
            if (cell >= 16) {
                // a corner flag, readable without colour
                fmt::format_to(std::back_inserter(out), R"(<polygon points="{},{} {},{} {},{}" fill="#D55E00"/>)",
                               num(x + cell - w), num(y + w), num(x + cell - w), num(y + w + cell * 0.32),
                               num(x + cell - w - cell * 0.32), num(y + w));
                out += '\n';
            }
        }
}

cell_counts draw_grid(std::string& out, const heatmap_data& d, const heatmap_layout& l, const value_range& range) {
    cell_counts counts;
    out += "<g>\n";
    const std::size_t n = d.hosts.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) draw_cell(out, d, l, range, i, j, counts);
    draw_bad_outlines(out, d, l, counts);
    fmt::format_to(std::back_inserter(out), R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888888"/>)",
                   num(l.left), num(l.top), num(l.grid), num(l.grid));
    out += "\n</g>\n";
    return counts;
}

void draw_colour_scale(std::string& out, const heatmap_data& d, const value_range& range, double sx, double sy,
                       double scale_h) {
    if (!range.have_values()) {
        svg::text(out, sx, sy + 12, "no values", 13, "start", R"(fill="#666666")");
        return;
    }
    const int steps = 60;
    for (int k = 0; k < steps; ++k) {
        // top of the bar is the highest value
        double t = 1 - (k + 0.5) / steps;
        const double tc = d.higher_is_better ? t : 1 - t;
        fmt::format_to(std::back_inserter(out), R"(<rect x="{}" y="{}" width="18" height="{}" fill="{}"/>)", num(sx),
                       num(sy + scale_h * k / steps), num(scale_h / steps + 0.6), viridis(tc));
        out += '\n';
    }
    fmt::format_to(std::back_inserter(out), R"(<rect x="{}" y="{}" width="18" height="{}" fill="none" stroke="#888888"/>)",
                   num(sx), num(sy), num(scale_h));
    out += '\n';
    for (int k = 0; k <= 4; ++k) {
        const double v = range.hi - (range.hi - range.lo) * k / 4.0;
        const double y = sy + scale_h * k / 4.0;
        fmt::format_to(std::back_inserter(out), R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#555555"/>)", num(sx + 18),
                       num(y), num(sx + 23), num(y));
        out += '\n';
        svg::text(out, sx + 27, y + 4.5, value_text(v), 12, "start", R"(fill="#333333")");
    }
    svg::text(out, sx, sy - 10, d.unit.empty() ? "value" : d.unit, 13, "start", R"(font-weight="bold" fill="#222222")");
}

void draw_key(std::string& out, const heatmap_data& d, const cell_counts& counts, double sx, double ky) {
    auto key_row = [&](const std::string& swatch, const std::string& label) {
        out += swatch;
        svg::text(out, sx + 26, ky + 12, label, 12, "start", R"(fill="#333333")");
        ky += 22;
    };
    key_row(fmt::format(R"(<rect x="{}" y="{}" width="16" height="16" fill="#ffffff" stroke="#D55E00" stroke-width="2.5"/>)"
                        "\n<polygon points=\"{},{} {},{} {},{}\" fill=\"#D55E00\"/>\n",
                        num(sx + 1), num(ky + 1), num(sx + 16), num(ky + 1), num(sx + 16), num(ky + 7), num(sx + 10),
                        num(ky + 1)),
            fmt::format("bad link ({})", counts.bad));
    key_row(fmt::format(R"(<rect x="{}" y="{}" width="16" height="16" fill="#bdbdbd"/>)"
                        "\n<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222222\">✕</text>\n",
                        num(sx + 1), num(ky + 1), num(sx + 9), num(ky + 13)),
            fmt::format("unreachable ({})", counts.unreachable));
    key_row(fmt::format(R"(<rect x="{}" y="{}" width="16" height="16" fill="#f7f7f7" stroke="#cccccc"/>)" "\n", num(sx + 1),
                        num(ky + 1)),
            fmt::format("not measured ({})", counts.missing));
    std::size_t suspects = 0;
    for (bool s : d.suspect) suspects += s;
    key_row(fmt::format(R"(<text x="{}" y="{}" font-size="13" text-anchor="middle" fill="#D55E00" font-weight="bold">⚑</text>)" "\n",
                        num(sx + 9), num(ky + 13)),
            fmt::format("suspect host ({})", suspects));
}

}  // namespace

std::string render_heatmap_svg(const heatmap_data& d, const heatmap_options& opt) {
    check_shapes(d);
    const auto range = finite_range(d);
    const auto layout = make_layout(d, opt);
    const std::string title = d.title.empty() ? fmt::format("Cluster matrix, {} hosts", d.hosts.size()) : d.title;
    std::string out = svg::open_svg(layout.width, layout.height, title);
    svg::text(out, 24, 30, title, 20, "start", R"(font-weight="bold" fill="#111111")");
    svg::text(out, 24, 50, "rows: sending host · columns: receiving host", 13, "start", R"(fill="#555555")");
    draw_host_names(out, d, layout);
    const auto counts = draw_grid(out, d, layout, range);
    const double sx = layout.left + layout.grid + 36, sy = layout.top;
    draw_colour_scale(out, d, range, sx, sy, layout.scale_h);
    draw_key(out, d, counts, sx, sy + layout.scale_h + 30);
    out += "</svg>\n";
    return out;
}

heatmap_data heatmap_from_analysis(const analysis::matrix_analysis& a, std::span<const std::string> host_names,
                                   heatmap_metric metric) {
    const std::size_t n = a.host_count;
    if (!host_names.empty() && host_names.size() != n)
        throw core::spec_error(fmt::format("heatmap: {} host names for {} hosts", host_names.size(), n));
    heatmap_data d;
    d.unit = metric == heatmap_metric::bandwidth ? "Gbit/s" : "µs";
    d.higher_is_better = metric == heatmap_metric::bandwidth;
    d.title = fmt::format("{} matrix, {} hosts", metric == heatmap_metric::bandwidth ? "Bandwidth" : "One-way latency", n);
    for (std::size_t i = 0; i < n; ++i) d.hosts.push_back(host_names.empty() ? fmt::format("host {}", i) : host_names[i]);
    d.values.assign(n, std::vector<std::optional<double>>(n));
    d.bad.assign(n, std::vector<bool>(n, false));
    d.unreachable.assign(n, std::vector<bool>(n, false));
    d.suspect.assign(n, false);
    d.why_bad.assign(n, std::vector<std::string>(n));
    for (const auto& v : a.links) {
        const auto& l = v.link;
        if (l.from >= n || l.to >= n) continue;
        d.values[l.from][l.to] = metric == heatmap_metric::bandwidth ? l.gbit_per_s : l.lat_us;
        // A link bad for its counters or a rail is marked on both heatmaps: its aggregate
        // figures do not explain it.
        d.bad[l.from][l.to] = l.reachable && ((metric == heatmap_metric::bandwidth ? v.bandwidth_bad : v.latency_bad) ||
                                              v.counters_bad || v.rails_bad);
        if (d.bad[l.from][l.to]) d.why_bad[l.from][l.to] = v.reason;
        d.unreachable[l.from][l.to] = !l.reachable;
    }
    for (std::size_t s : a.suspects)
        if (s < n) d.suspect[s] = true;
    return d;
}

}  // namespace meshperf::client
