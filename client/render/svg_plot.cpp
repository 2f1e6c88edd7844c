#include "client/render/svg_plot.hpp"
#include "core/figure_text.hpp"

#include "client/render/svg_panel.hpp"

#include "core/sizes.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <utility>

namespace meshperf::client {

using namespace plot;

namespace {

using svg::num;

// Model curve sample sizes: a geometric grid over the fitted range.
std::vector<double> model_grid(const analysis::model_fit& m) {
    const double lo = static_cast<double>(std::max<std::uint64_t>(1, m.line.min_size_bytes));
    const double hi = static_cast<double>(std::max(m.line.max_size_bytes, m.line.min_size_bytes));
    std::vector<double> g;
    if (!(hi > lo)) return g;
    const int n = 96;
    for (int i = 0; i <= n; ++i) g.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / n));
    return g;
}

std::string fit_text(const analysis::model_fit& m) {
    auto beta = [](const analysis::line_fit& l) {
        return std::isfinite(l.beta_bytes_per_s) ? fmt::format("{}", core::plain_number(l.beta_gbit_per_s(), 3)) : std::string("∞");
    };
    if (m.piecewise) {
        const auto& p = *m.piecewise;
        return fmt::format("fit: α {} / {} µs, β {} / {} Gbit/s, break {}–{}", core::plain_number(p.below.alpha_us(), 3), core::plain_number(p.above.alpha_us(), 3),
                           beta(p.below), beta(p.above), core::format_size(p.break_after_bytes),
                           core::format_size(p.break_before_bytes));
    }
    return fmt::format("fit: α {} µs, β {} Gbit/s, n½ {}", core::plain_number(m.line.alpha_us(), 3), beta(m.line),
                       core::format_size(static_cast<std::uint64_t>(std::llround(m.line.n_half_bytes()))));
}

}  // namespace

std::string run_label(const core::run_result& r) {
    // Host names say the most, unless both ends have the same one (two daemons on one host,
    // "vm → vm"): then the addresses tell the runs apart.
    const bool same_host = !r.initiator.hostname.empty() && r.initiator.hostname == r.peer.hostname;
    auto side = [&](const core::host_info& h, const std::string& spec_address) -> std::string {
        if (!same_host && !h.hostname.empty()) return h.hostname;
        if (!h.address.empty()) return h.address;
        if (!spec_address.empty()) return spec_address;
        return h.hostname.empty() ? "?" : h.hostname;
    };
    std::string s = fmt::format("{} → {} ({}", side(r.initiator, ""), side(r.peer, r.spec.peer), r.spec.transport);
    if (r.spec.local_memory != "host" || r.spec.remote_memory != "host")
        s += fmt::format(", {} → {}", r.spec.local_memory, r.spec.remote_memory);
    if (r.spec.streams > 1) s += fmt::format(", {} streams", r.spec.streams);
    return s + ")";
}

namespace {

template <class Runs, class RunOf>
plot_options panels_with_points(const Runs& runs, RunOf run_of, plot_options opt) {
    bool latency = false, bandwidth = false;
    for (const auto& r : runs)
        for (const auto& p : run_of(r).points) (p.test == core::test_kind::latency ? latency : bandwidth) = true;
    if (latency || bandwidth) {
        opt.latency = opt.latency && latency;
        opt.bandwidth = opt.bandwidth && bandwidth;
    }
    return opt;
}

}  // namespace

plot_options measured_panels(std::span<const core::run_result> runs, plot_options opt) {
    return panels_with_points(runs, [](const core::run_result& r) -> const core::run_result& { return r; }, std::move(opt));
}

plot_options measured_panels(std::span<const plot_run> runs, plot_options opt) {
    return panels_with_points(runs, [](const plot_run& r) -> const core::run_result& { return r.run; }, std::move(opt));
}

namespace {

/// The size axis both panels share, so that they line up: the runs' sizes (1 B..1 MiB
/// without any), widened by 0.35 octave each side.
std::pair<double, double> size_domain(std::span<const plot_run> runs) {
    double x_lo = INFINITY, x_hi = 0;
    for (const auto& pr : runs)
        for (const auto& p : pr.run.points)
            if (p.size_bytes > 0) {
                x_lo = std::min(x_lo, static_cast<double>(p.size_bytes));
                x_hi = std::max(x_hi, static_cast<double>(p.size_bytes));
            }
    if (!(x_hi > 0)) {
        x_lo = 1;
        x_hi = 1 << 20;
    }
    return {x_lo / std::pow(2.0, 0.35), x_hi * std::pow(2.0, 0.35)};
}

/// Latency in ms when some p99 reaches 10 ms, else in µs.
bool latency_in_ms(std::span<const plot_run> runs) {
    double lat_max_us = 0;
    for (const auto& pr : runs)
        for (const auto& p : pr.run.points)
            if (p.lat_ns && std::isfinite(p.lat_ns->p99)) lat_max_us = std::max(lat_max_us, p.lat_ns->p99 / 1e3);
    return lat_max_us >= 1e4;
}

/// What a sweep plot draws: both panels, the legend, and what the key and the note say.
struct sweep_drawing {
    panel lat, bw;
    std::vector<legend_entry> legend;
    std::size_t skipped = 0;  ///< points without a positive, finite figure
    bool any_model = false, any_bidir = false;
};

/// The measured series of one run (style `style`), sorted by size; `skipped` counts the
/// points that cannot sit on a log axis. Latency is divided by `lat_div` (µs to the axis).
struct run_series {
    series lat, bw, bidir;
};
run_series measured_series(const core::run_result& run, std::size_t style, double lat_div, std::size_t& skipped) {
    std::vector<const core::point_result*> pts;
    for (const auto& p : run.points) pts.push_back(&p);
    std::stable_sort(pts.begin(), pts.end(), [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; });
    run_series r{{style, {}, {}, false}, {style, {}, {}, false}, {style, {}, {}, true}};
    for (const auto* p : pts) {
        const double n = static_cast<double>(p->size_bytes);
        if (p->test == core::test_kind::latency) {
            if (!p->lat_ns || p->size_bytes == 0 || !plottable(p->lat_ns->p50)) {
                ++skipped;
                continue;
            }
            r.lat.points.push_back({n, p->lat_ns->p50 / 1e3 / lat_div});
            const double hi = plottable(p->lat_ns->p99) ? p->lat_ns->p99 : p->lat_ns->p50;
            r.lat.band_hi.push_back({n, std::max(hi, p->lat_ns->p50) / 1e3 / lat_div});
        } else {
            if (p->size_bytes == 0 || !plottable(p->gbit_per_s)) {
                ++skipped;
                continue;
            }
            (p->test == core::test_kind::bidir ? r.bidir : r.bw).points.push_back({n, p->gbit_per_s});
        }
    }
    return r;
}

/// Adds model `m` of run `style` to the panels that have its run's points (`on_lat`,
/// `on_bw`): its curves, and the break of a piecewise model.
void add_model(sweep_drawing& d, const analysis::model_fit& m, std::size_t style, double lat_div, bool on_lat, bool on_bw) {
    curve lc{style, {}}, bc{style, {}};
    for (double n : model_grid(m)) {
        const auto& seg = m.line_for(n);
        if (seg.alpha_source == "latency") {
            const double t_us = seg.time_s(n) * 1e6 / lat_div;
            if (plottable(t_us)) lc.points.push_back({n, t_us});
        }
        if (seg.stream_alpha_s || seg.alpha_source == "bandwidth") {
            const double t = seg.stream_alpha_s.value_or(seg.alpha_s) + n / seg.beta_bytes_per_s;
            const double gbit = core::gbit_per_s(n, t);
            if (plottable(gbit)) bc.points.push_back({n, gbit});
        }
    }
    if (on_lat && lc.points.size() >= 2) d.lat.models.push_back(std::move(lc));
    if (on_bw && bc.points.size() >= 2) d.bw.models.push_back(std::move(bc));
    if (m.piecewise) {
        const double at = std::sqrt(static_cast<double>(m.piecewise->break_after_bytes) *
                                    static_cast<double>(m.piecewise->break_before_bytes));
        if (on_lat) d.lat.breaks.push_back({at, style});
        if (on_bw) d.bw.breaks.push_back({at, style});
    }
}

/// Both panels and the legend of `runs`, run i drawn in style i.
sweep_drawing sweep_drawing_of(std::span<const plot_run> runs, bool percentile_band) {
    const bool ms = latency_in_ms(runs);
    const double lat_div = ms ? 1e3 : 1.0;
    sweep_drawing d;
    d.lat = {"One-way latency (p50; shaded: p50 to p99)", ms ? "one-way latency (ms)" : "one-way latency (µs)",
             "no latency points", {}, {}, {}};
    d.bw = {"Bandwidth (goodput at the receiver)", "bandwidth (Gbit/s)", "no bandwidth points", {}, {}, {}};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& pr = runs[i];
        auto s = measured_series(pr.run, i, lat_div, d.skipped);
        if (!percentile_band) s.lat.band_hi.clear();
        const bool on_lat = !s.lat.points.empty(), on_bw = !s.bw.points.empty();
        if (on_lat) d.lat.data.push_back(std::move(s.lat));
        if (on_bw) d.bw.data.push_back(std::move(s.bw));
        if (!s.bidir.points.empty()) {
            d.bw.data.push_back(std::move(s.bidir));
            d.any_bidir = true;
        }
        const std::string label = pr.label.empty() ? run_label(pr.run) : pr.label;
        d.legend.push_back({i, label, pr.model ? fit_text(*pr.model) : std::string(), false});
        if (pr.model) {
            add_model(d, *pr.model, i, lat_div, on_lat, on_bw);
            d.any_model = true;
        }
    }
    return d;
}

/// opt.title, else "meshperf sweep: " and the one run's label or the number of runs.
std::string sweep_title(std::span<const plot_run> runs, const plot_options& opt) {
    if (!opt.title.empty()) return opt.title;
    return runs.size() == 1 ? "meshperf sweep: " + (runs[0].label.empty() ? run_label(runs[0].run) : runs[0].label)
                            : fmt::format("meshperf sweep: {} runs", runs.size());
}

/// The key under the legend: what markers, dashes and dots mean.
std::string sweep_key(const sweep_drawing& d, bool no_runs) {
    if (no_runs) return "no runs";
    std::string key = "markers: measured";
    if (d.any_model) key += " · dashed: fitted model t(n) = α + n/β";
    if (d.any_bidir) key += " · dotted, open markers: bidirectional (sum)";
    return key;
}

}  // namespace

std::string render_sweep_svg(std::span<const plot_run> runs, const plot_options& opt) {
    const double width = std::max(480u, opt.width);
    const double panel_h = std::max(220u, opt.panel_height);
    const auto [x_lo, x_hi] = size_domain(runs);
    const auto d = sweep_drawing_of(runs, opt.percentile_band);
    const std::string title = sweep_title(runs, opt);

    const double title_h = 44;
    std::string scratch;
    const double legend_h = draw_legend(scratch, d.legend, 0, width, false);  // measure only
    const double key_h = 20;
    const int panels = (opt.latency ? 1 : 0) + (opt.bandwidth ? 1 : 0);
    const double note_h = d.skipped ? 22 : 0;
    const double height = title_h + legend_h + key_h + panels * panel_h + note_h + 8;

    std::string out = svg::open_svg(width, height, title);
    svg::text(out, 86, 30, title, 20, "start", R"(font-weight="bold" fill="#111111")");
    draw_legend(out, d.legend, title_h, width, true);
    svg::text(out, 86, title_h + legend_h + 12, sweep_key(d, runs.empty()), 12, "start", R"(fill="#555555")");
    double y = title_h + legend_h + key_h;
    if (opt.latency) {
        draw_panel(out, d.lat, x_lo, x_hi, y, width, panel_h);
        y += panel_h;
    }
    if (opt.bandwidth) {
        draw_panel(out, d.bw, x_lo, x_hi, y, width, panel_h);
        y += panel_h;
    }
    if (d.skipped)
        svg::text(out, 86, y + 14,
                  fmt::format("{} point(s) without a positive, finite figure are not drawn.", d.skipped), 12, "start",
                  R"(fill="#D55E00")");
    out += "</svg>\n";
    return out;
}

std::string render_sweep_svg(const core::run_result& run, const plot_options& opt) {
    plot_run pr{"", run, std::nullopt};
    try {
        pr.model = analysis::fit_model(run);
    } catch (const std::exception&) {
        // too few sizes, or no size dependence: draw the points without a model
    }
    return render_sweep_svg(std::span<const plot_run>(&pr, 1), opt);
}

}  // namespace meshperf::client
