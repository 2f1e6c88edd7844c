#include "client/render/html_report.hpp"

#include "core/transport_rules.hpp"

#include "client/render/svg_collective.hpp"

#include "client/render/figure_text.hpp"
#include "client/render/point_warnings.hpp"
#include "client/render/svg_heatmap.hpp"
#include "client/render/svg_plot.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <fmt/ranges.h>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace meshperf::client {

namespace {

// Readable on screen and on paper; tabular figures so columns of numbers line up.
constexpr std::string_view css = R"css(
:root { color-scheme: light; }
body { font-family: 'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif; color: #1a1a1a; background: #ffffff;
       max-width: 1180px; margin: 24px auto; padding: 0 24px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 28px; margin: 0 0 4px 0; }
h2 { font-size: 21px; margin: 40px 0 10px 0; padding-bottom: 4px; border-bottom: 2px solid #0072B2; }
h3 { font-size: 16px; margin: 22px 0 8px 0; }
p.meta, p.note { color: #555555; margin: 2px 0; }
nav ol { margin: 8px 0 0 0; }
table { border-collapse: collapse; margin: 6px 0 14px 0; font-size: 13.5px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e2e2e2; text-align: left; vertical-align: top; }
th { background: #f1f4f8; font-weight: 600; }
tr:nth-child(even) td { background: #fafafa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv th { width: 15em; background: none; }
.model { border-left: 4px solid #009E73; background: #f4faf7; padding: 8px 14px; margin: 10px 0 14px 0; }
.model.bad { border-left-color: #E69F00; background: #fdf8ee; }
.warn { border-left: 4px solid #E69F00; background: #fdf8ee; padding: 6px 14px; margin: 8px 0; }
.error { border-left: 4px solid #D55E00; background: #fcefe8; padding: 6px 14px; margin: 8px 0; }
.figure { margin: 10px 0 18px 0; overflow-x: auto; }
.figure svg { max-width: 100%; height: auto; }
td.badcell { color: #D55E00; font-weight: 600; }
code { font-family: 'DejaVu Sans Mono', Menlo, monospace; font-size: 13px; }
footer { color: #777777; margin: 40px 0 16px 0; font-size: 13px; border-top: 1px solid #e2e2e2; padding-top: 8px; }
@media print { body { max-width: none; } h2 { break-before: auto; } .figure { break-inside: avoid; } }
)css";

std::string esc(std::string_view s) { return xml_escape(s); }

std::string us_text(double ns) {
    if (!std::isfinite(ns)) return "–";
    const double us = ns / 1e3;
    if (us >= 1000) return fmt::format("{:.0f}", us);
    if (us >= 100) return fmt::format("{:.1f}", us);
    return fmt::format("{:.2f}", us);
}

/// Rates: three significant digits (client/render/figure_text.hpp), so 1 B at 0.000123 Gbit/s is
/// not "0.00".
std::string rate_figure(double v) { return significant_text(v, 3, "–"); }

std::string rate_text(double v) {
    if (!std::isfinite(v)) return "–";
    if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
    if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
    return fmt::format("{:.0f}", v);
}

std::string precision_text(const core::precision_info& p) {
    if (!p.adaptive) return "fixed";
    if (!std::isfinite(p.achieved)) return p.met ? "met" : "missed (no estimate)";
    return fmt::format("±{:.2f}% {}", p.achieved * 100, p.met ? "met" : "missed");
}

void row(std::string& out, std::initializer_list<std::string> cells, std::initializer_list<bool> numeric) {
    out += "<tr>";
    auto n = numeric.begin();
    for (const auto& c : cells) {
        const bool num = n != numeric.end() && *n;
        out += num ? "<td class=\"num\">" : "<td>";
        out += c;
        out += "</td>";
        if (n != numeric.end()) ++n;
    }
    out += "</tr>\n";
}

void kv(std::string& out, std::string_view key, const std::string& value_html) {
    fmt::format_to(std::back_inserter(out), "<tr><th>{}</th><td>{}</td></tr>\n", esc(key), value_html);
}

std::string host_text(const core::host_info& h) {
    std::string s = esc(h.hostname.empty() ? (h.address.empty() ? "?" : h.address) : h.hostname);
    if (!h.hostname.empty() && !h.address.empty()) s += " <span class=\"meta\">(" + esc(h.address) + ")</span>";
    std::vector<std::string> more;
    if (!h.cpu_model.empty()) more.push_back(esc(h.cpu_model) + (h.cpu_count ? fmt::format(", {} CPUs", h.cpu_count) : ""));
    if (!h.kernel.empty()) more.push_back("Linux " + esc(h.kernel));
    if (!h.version.empty()) more.push_back("meshperf " + esc(h.version));
    for (std::size_t i = 0; i < more.size(); ++i) s += (i == 0 ? "<br>" : " · ") + more[i];
    return s;
}

std::string beta_text(const analysis::line_fit& l) {
    if (!std::isfinite(l.beta_bytes_per_s)) return "∞ (no size dependence)";
    return core::gbit_gbyte_text(l.beta_bytes_per_s, 4);
}

std::string n_half_text(const analysis::line_fit& l) {
    if (!std::isfinite(l.n_half_bytes())) return "–";
    return esc(core::format_size(static_cast<std::uint64_t>(std::llround(l.n_half_bytes()))));
}

void model_rows(std::string& out, const analysis::line_fit& l) {
    kv(out, "α (start-up latency)",
       fmt::format("{} µs{}", core::plain_number(l.alpha_us(), 3), l.alpha_source == "latency" ? "" : " (from stream points: a lower bound)"));
    if (l.stream_alpha_s) kv(out, "α of a stream message", fmt::format("{} µs", core::plain_number(*l.stream_alpha_s * 1e6, 3)));
    kv(out, "β (bandwidth)", beta_text(l));
    kv(out, "n½ = α·β", n_half_text(l));
    kv(out, "R²", fmt::format("{:.4f}", l.r_squared));
    kv(out, "worst relative residual",
       fmt::format("{:.1f}% at {} ({})", l.worst_rel_residual * 100, esc(core::format_size(l.worst_size_bytes)),
                   l.worst_is_stream ? "bandwidth" : "latency"));
    kv(out, "points fitted",
       fmt::format("{} from {} to {}", l.points, esc(core::format_size(l.min_size_bytes)), esc(core::format_size(l.max_size_bytes))));
}

void render_model(std::string& out, const std::optional<analysis::model_fit>& m, const std::string& why_not) {
    if (!m) {
        fmt::format_to(std::back_inserter(out), "<div class=\"model bad\"><strong>No model:</strong> {}</div>\n", esc(why_not));
        return;
    }
    fmt::format_to(std::back_inserter(out), "<div class=\"model{}\">\n<strong>Model t(n) = α + n/β</strong>{}\n",
                   m->line_fits() ? "" : " bad",
                   m->line_fits() ? ""
                                  : fmt::format(" — one line misses by more than {:.0f}%{}", m->piecewise_threshold * 100,
                                                m->piecewise ? ", so it is fitted in two pieces" : ""));
    out += "<table class=\"kv\">\n";
    model_rows(out, m->line);
    out += "</table>\n";
    if (m->piecewise) {
        const auto& p = *m->piecewise;
        fmt::format_to(std::back_inserter(out),
                       "<p><strong>Piecewise:</strong> break between {} and {}; worst residual {:.1f}%, R² {:.4f}.</p>\n",
                       esc(core::format_size(p.break_after_bytes)), esc(core::format_size(p.break_before_bytes)),
                       p.worst_rel_residual * 100, p.r_squared);
        out += "<table>\n<tr><th>segment</th><th class=\"num\">α (µs)</th><th class=\"num\">β</th><th class=\"num\">n½</th>"
               "<th class=\"num\">R²</th><th class=\"num\">worst residual</th></tr>\n";
        for (const auto* seg : {&p.below, &p.above})
            row(out,
                {fmt::format("{} … {}", esc(core::format_size(seg->min_size_bytes)), esc(core::format_size(seg->max_size_bytes))),
                 fmt::format("{}", core::plain_number(seg->alpha_us(), 3)), beta_text(*seg), n_half_text(*seg), fmt::format("{:.4f}", seg->r_squared),
                 fmt::format("{:.1f}%", seg->worst_rel_residual * 100)},
                {false, true, true, true, true, true});
        out += "</table>\n";
    }
    out += "</div>\n";
}

void render_point_warnings(std::string& out, const point_warnings& pw, std::size_t run_index) {
    if (pw.groups.empty()) return;
    out += "<h3>Warnings on points</h3>\n";
    for (std::size_t k = 0; k < pw.groups.size(); ++k) {
        const auto& g = pw.groups[k];
        fmt::format_to(std::back_inserter(out),
                       "<div class=\"warn\" id=\"run-{}-w{}\"><strong>W{}</strong> {} <span class=\"meta\">— {}</span></div>\n",
                       run_index + 1, k + 1, k + 1, esc(g.text), esc(g.where));
    }
}

/// The warnings cell of a point: links to its groups ("W1, W3").
std::string warning_refs(const core::point_result* p, const point_warnings& pw, std::size_t run_index) {
    const auto it = pw.of_point.find(p);
    if (it == pw.of_point.end()) return {};
    std::string refs;
    for (auto k : it->second)
        refs += fmt::format("{}<a href=\"#run-{}-w{}\">W{}</a>", refs.empty() ? "" : ", ", run_index + 1, k + 1, k + 1);
    return refs;
}

void render_points(std::string& out, const core::run_result& r, const point_warnings& pw, std::size_t run_index) {
    std::vector<const core::point_result*> lat, bw, bidir;
    for (const auto& p : r.points)
        (p.test == core::test_kind::latency ? lat : p.test == core::test_kind::bidir ? bidir : bw).push_back(&p);
    auto by_size = [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; };
    std::stable_sort(lat.begin(), lat.end(), by_size);
    std::stable_sort(bw.begin(), bw.end(), by_size);
    std::stable_sort(bidir.begin(), bidir.end(), by_size);

    if (!lat.empty()) {
        out += "<h3>Latency (one-way, µs)</h3>\n<table>\n<tr><th class=\"num\">size</th><th class=\"num\">min</th>"
               "<th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p99</th><th class=\"num\">p99.9</th>"
               "<th class=\"num\">max</th><th class=\"num\">mean</th><th class=\"num\">samples</th><th>precision</th>"
               "<th>warnings</th></tr>\n";
        for (const auto* p : lat) {
            const core::summary s = p->lat_ns.value_or(core::summary{});
            const std::string warn = warning_refs(p, pw, run_index);
            row(out,
                {esc(core::format_size(p->size_bytes)), us_text(s.min), us_text(s.p50), us_text(s.p90), us_text(s.p99),
                 us_text(s.p999), us_text(s.max), us_text(s.mean), fmt::format("{}", s.count), esc(precision_text(p->precision)),
                 warn},
                {true, true, true, true, true, true, true, true, true, false, false});
        }
        out += "</table>\n";
    }
    auto rate_table = [&](const std::vector<const core::point_result*>& pts, std::string_view title) {
        if (pts.empty()) return;
        fmt::format_to(std::back_inserter(out),
                       "<h3>{}</h3>\n<table>\n<tr><th class=\"num\">size</th><th class=\"num\">Gbit/s</th>"
                       "<th class=\"num\">GB/s</th><th class=\"num\">messages/s</th><th class=\"num\">interval min–max (Gbit/s)</th>"
                       "<th class=\"num\">CPU % (local / peer)</th><th>precision</th><th>warnings</th></tr>\n",
                       esc(title));
        for (const auto* p : pts) {
            double imin = INFINITY, imax = 0;
            for (const auto& f : p->flows) {
                imin = std::min(imin, f.interval_min_gbit);
                imax = std::max(imax, f.interval_max_gbit);
            }
            const std::string warn = warning_refs(p, pw, run_index);
            row(out,
                {esc(core::format_size(p->size_bytes)), rate_figure(p->gbit_per_s), rate_figure(core::gbyte_from_gbit(p->gbit_per_s)),
                 rate_text(p->msg_per_s), p->flows.empty() ? "–" : rate_figure(imin) + " – " + rate_figure(imax),
                 fmt::format("{:.0f} / {:.0f}", p->cpu.local_percent, p->cpu.remote_percent), esc(precision_text(p->precision)),
                 warn},
                {true, true, true, true, true, true, false, false});
        }
        out += "</table>\n";
    };
    rate_table(bw, "Bandwidth");
    rate_table(bidir, "Bidirectional bandwidth (sum of both directions)");
}

std::string tests_text(const core::run_spec& s) {
    std::string t;
    for (auto k : s.tests) t += (t.empty() ? "" : ", ") + std::string(core::to_string(k));
    return t;
}

void render_run(std::string& out, const core::run_result& r, const std::string& label, std::size_t index,
                const report_options& opt) {
    fmt::format_to(std::back_inserter(out), "<section id=\"run-{}\">\n<h2>{}</h2>\n", index + 1, esc(label));
    out += "<table class=\"kv\">\n";
    if (!r.id.empty()) kv(out, "run", "<code>" + esc(r.id) + "</code>");
    kv(out, "state", esc(r.state.empty() ? "?" : std::string(r.state.text())));
    if (!r.created_at.empty())
        kv(out, "time", esc(r.created_at) + (r.finished_at.empty() ? "" : " – " + esc(r.finished_at)));
    kv(out, "initiator", host_text(r.initiator));
    kv(out, "peer", r.peer.hostname.empty() && r.peer.address.empty() ? esc(r.spec.peer) : host_text(r.peer));
    std::string path = esc(r.spec.transport);
    if (const auto details = core::transport_rules_of(r.spec.transport).path_details) {
        std::vector<std::string> words;
        for (const auto& w : details(r.spec)) words.push_back(esc(w));
        path += fmt::format(" ({})", fmt::join(words, ", "));
    }
    path += fmt::format(", memory {} → {}", esc(r.spec.local_memory), esc(r.spec.remote_memory));
    if (r.spec.streams > 1) path += fmt::format(", {} streams", r.spec.streams);
    if (r.spec.reverse) path += ", reverse";
    kv(out, "path", path);
    kv(out, "tests", esc(tests_text(r.spec)) + fmt::format(", {} sizes, {} points", r.spec.sizes.size(), r.points.size()));
    out += "</table>\n";
    if (!r.error.empty()) fmt::format_to(std::back_inserter(out), "<div class=\"error\"><strong>Error:</strong> {}</div>\n", esc(r.error));
    for (const auto& w : r.warnings) fmt::format_to(std::back_inserter(out), "<div class=\"warn\">{}</div>\n", esc(w));

    std::optional<analysis::model_fit> model;
    std::string why_not;
    try {
        model = analysis::fit_model(r, opt.model);
    } catch (const std::exception& e) {
        why_not = e.what();
    }
    render_model(out, model, why_not);

    if (opt.plots && !r.points.empty()) {
        plot_run pr{label, r, model};
        plot_options po = measured_panels(std::span(&r, 1));  // no empty panel
        po.title = po.latency && po.bandwidth ? "Latency and bandwidth against message size"
                   : po.latency               ? "Latency against message size"
                                              : "Bandwidth against message size";
        out += "<div class=\"figure\">\n";
        out += render_sweep_svg(std::span<const plot_run>(&pr, 1), po);
        out += "</div>\n";
    }
    const auto pw = group_point_warnings(r);
    render_point_warnings(out, pw, index);
    if (opt.point_tables) render_points(out, r, pw, index);
    out += "</section>\n";
}

std::string fig(const std::optional<double>& v) { return v ? significant_text(*v, 3, "–") : "–"; }

void render_matrix(std::string& out, const report_matrix& m, std::size_t index, const report_options& opt) {
    const auto& a = m.analysis;
    auto name = [&](std::size_t i) { return i < m.hosts.size() ? m.hosts[i] : fmt::format("host {}", i); };
    const std::string title = m.title.empty() ? fmt::format("Cluster matrix, {} hosts", a.host_count) : m.title;
    fmt::format_to(std::back_inserter(out), "<section id=\"matrix-{}\">\n<h2>{}</h2>\n<table class=\"kv\">\n", index + 1,
                   esc(title));
    std::size_t bad = 0;
    for (const auto& l : a.links) bad += l.bad;
    kv(out, "links", fmt::format("{} measured, {} bad", a.links.size(), bad));
    const bool median_rule = a.reference_rule == "median";
    const auto against = [&](const std::optional<double>& ref, const char* unit) {
        return median_rule || !ref ? std::string("it") : fmt::format("the better half's median, {} {}", significant_text(*ref, 4, "–"), unit);
    };
    if (a.bandwidth)
        kv(out, "median bandwidth",
           fmt::format("{} Gbit/s (MAD {}); bad below {:.0f}% of {}", significant_text(a.bandwidth->median, 4, "–"),
                       significant_text(a.bandwidth->mad, 3, "–"), a.options.bandwidth_fraction * 100,
                       against(a.bandwidth_reference, "Gbit/s")));
    if (a.latency)
        kv(out, "median latency",
           fmt::format("{} µs (MAD {}); bad above {}× {}", significant_text(a.latency->median, 4, "–"),
                       significant_text(a.latency->mad, 3, "–"), significant_text(a.options.latency_multiple, 3, "–"),
                       against(a.latency_reference, "µs")));
    if (!median_rule)
        kv(out, "judged against", fmt::format("the median of the better half of the links: with {} hosts one slow host's links "
                                              "are half of all links or more, so the median could be the slow figure",
                                              a.host_count));
    std::string suspects, unreachable;
    for (auto s : a.suspects) suspects += (suspects.empty() ? "" : ", ") + esc(name(s));
    for (auto s : a.unreachable) unreachable += (unreachable.empty() ? "" : ", ") + esc(name(s));
    kv(out, "suspect hosts", suspects.empty() ? "none" : "<span class=\"badcell\">" + suspects + "</span>");
    kv(out, "unreachable hosts", unreachable.empty() ? "none" : "<span class=\"badcell\">" + unreachable + "</span>");
    out += "</table>\n";

    if (opt.plots && a.host_count > 0) {
        for (auto metric : {heatmap_metric::bandwidth, heatmap_metric::latency}) {
            if (metric == heatmap_metric::bandwidth ? !a.bandwidth : !a.latency) continue;
            auto d = heatmap_from_analysis(a, m.hosts.size() == a.host_count ? std::span<const std::string>(m.hosts)
                                                                             : std::span<const std::string>{},
                                           metric);
            out += "<div class=\"figure\">\n" + render_heatmap_svg(d) + "</div>\n";
        }
    }

    std::vector<const analysis::link_verdict*> bad_links;
    for (const auto& l : a.links)
        if (l.bad) bad_links.push_back(&l);
    if (bad_links.empty()) {
        out += "<p>No bad links.</p>\n";
    } else {
        out += "<h3>Bad links</h3>\n<table>\n<tr><th>from</th><th>to</th><th class=\"num\">Gbit/s</th>"
               "<th class=\"num\">× reference</th><th class=\"num\">latency (µs)</th><th class=\"num\">× reference</th><th>why</th></tr>\n";
        for (const auto* l : bad_links) {
            const auto& s = l->link;
            row(out,
                {esc(name(s.from)), esc(name(s.to)), fig(s.gbit_per_s), fig(l->bandwidth_ratio), fig(s.lat_us), fig(l->latency_ratio),
                 esc(l->reason.empty() ? s.error : l->reason)},
                {false, false, true, true, true, true, false});
        }
        out += "</table>\n";
    }
    out += "</section>\n";
}

/// run_label of each run; runs that would still share a label (the same path measured
/// twice) get their run id, or their place in the report, after it.
std::vector<std::string> distinct_labels(std::span<const core::run_result> runs) {
    std::vector<std::string> labels;
    std::map<std::string, std::size_t> seen;
    for (const auto& r : runs) ++seen[labels.emplace_back(run_label(r))];
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (seen[labels[i]] > 1) labels[i] += runs[i].id.empty() ? fmt::format(" #{}", i + 1) : " · " + runs[i].id;
    return labels;
}

}  // namespace

namespace {

/// One collective run: its ranks and outcome, the plot, and a row per point.
void render_collective(std::string& out, const report_collective& c, std::size_t index, const report_options& opt) {
    const auto& r = c.run;
    fmt::format_to(std::back_inserter(out), "<section id=\"collective-{}\">\n<h2>Collective {}: {} ranks</h2>\n", index + 1,
                   esc(r.id), r.spec.hosts.size());
    out += "<table class=\"kv\">\n";
    std::string ranks;
    for (std::size_t q = 0; q < r.spec.hosts.size(); ++q)
        ranks += fmt::format("{}{} {}", q ? ", " : "", q, esc(r.spec.hosts[q]));
    kv(out, "ranks", ranks);
    kv(out, "state", esc(std::string(r.state.text())));
    kv(out, "transport, dtype", esc(fmt::format("{}, {}", r.spec.transport, core::to_string(r.spec.element))));
    if (!r.error.empty()) kv(out, "error", esc(r.error));
    for (const auto& w : r.warnings) kv(out, "warning", esc(w));
    out += "</table>\n";
    if (opt.plots && !r.points.empty())
        out += "<div class=\"figure\">\n" + render_collective_svg(r, c.predicted_time_s) + "</div>\n";
    if (!opt.point_tables || r.points.empty()) {
        out += "</section>\n";
        return;
    }
    out += "<table>\n<tr><th>op</th><th>algo</th><th>size</th><th>count</th><th>type</th><th>redop</th><th>time (µs)</th>"
           "<th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>#wrong</th><th>slowest rank</th><th>slowest link</th>"
           "<th>predicted (µs)</th><th>error</th></tr>\n";
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        const auto& p = r.points[i];
        const auto pred = i < c.predicted_time_s.size() ? c.predicted_time_s[i] : std::nullopt;
        fmt::format_to(std::back_inserter(out),
                       "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       core::to_string(p.op), core::to_string(p.algo), esc(core::format_size(p.size_bytes)), p.count,
                       core::to_string(p.element), core::redop_name(p.op), core::plain_number(p.time_s * 1e6, 4), core::plain_number(p.algbw_gbyte_per_s, 3),
                       core::plain_number(p.busbw_gbyte_per_s, 3), p.wrong ? std::to_string(*p.wrong) : "-", p.slowest_rank,
                       p.slowest_link ? esc(fmt::format("{} ({} Gbit/s)", core::to_string(*p.slowest_link),
                                                        core::plain_number(p.slowest_link->gbit_per_s, 3)))
                                      : "-",
                       pred ? core::plain_number(*pred * 1e6, 4) : "-",
                       pred ? fmt::format("{:+.1f}%", (p.time_s - *pred) / *pred * 100) : "-");
    }
    out += "</table>\n</section>\n";
}

}  // namespace

std::string render_html_report(std::span<const core::run_result> runs, std::span<const report_matrix> matrices,
                               const report_options& opt, std::span<const report_collective> collectives) {
    std::string out;
    out.reserve(64 * 1024);
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    fmt::format_to(std::back_inserter(out), "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(opt.title), css);
    fmt::format_to(std::back_inserter(out), "<h1>{}</h1>\n", esc(opt.title));
    std::string summary = fmt::format("{} run{}", runs.size(), runs.size() == 1 ? "" : "s");
    if (!matrices.empty()) summary += fmt::format(", {} matri{}", matrices.size(), matrices.size() == 1 ? "x" : "ces");
    if (!collectives.empty())
        summary += fmt::format(", {} collective run{}", collectives.size(), collectives.size() == 1 ? "" : "s");
    if (!opt.generated_at.empty()) summary += " · generated " + opt.generated_at;
    fmt::format_to(std::back_inserter(out), "<p class=\"meta\">{}</p>\n", esc(summary));

    const auto labels = distinct_labels(runs);
    if (runs.size() + matrices.size() + collectives.size() > 1) {
        out += "<nav><ol>\n";
        for (std::size_t i = 0; i < runs.size(); ++i)
            fmt::format_to(std::back_inserter(out), "<li><a href=\"#run-{}\">{}</a></li>\n", i + 1, esc(labels[i]));
        for (std::size_t i = 0; i < matrices.size(); ++i)
            fmt::format_to(std::back_inserter(out), "<li><a href=\"#matrix-{}\">{}</a></li>\n", i + 1,
                           esc(matrices[i].title.empty()
                                   ? fmt::format("Cluster matrix, {} hosts", matrices[i].analysis.host_count)
                                   : matrices[i].title));
        for (std::size_t i = 0; i < collectives.size(); ++i)
            fmt::format_to(std::back_inserter(out), "<li><a href=\"#collective-{}\">{}</a></li>\n", i + 1,
                           esc(fmt::format("Collective {}: {} ranks", collectives[i].run.id, collectives[i].run.spec.hosts.size())));
        out += "</ol></nav>\n";
    }

    if (opt.plots && runs.size() > 1) {
        std::vector<plot_run> all;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const auto& r = runs[i];
            plot_run pr{labels[i], r, std::nullopt};
            try {
                pr.model = analysis::fit_model(r, opt.model);
            } catch (const std::exception&) {
                // drawn without a model; the run's own section says why
            }
            all.push_back(std::move(pr));
        }
        plot_options po = measured_panels(runs);
        po.title = fmt::format("All {} runs", runs.size());
        out += "<section id=\"overview\">\n<h2>Overview</h2>\n<div class=\"figure\">\n" + render_sweep_svg(all, po) +
               "</div>\n</section>\n";
    }
    for (std::size_t i = 0; i < runs.size(); ++i) render_run(out, runs[i], labels[i], i, opt);
    for (std::size_t i = 0; i < matrices.size(); ++i) render_matrix(out, matrices[i], i, opt);
    for (std::size_t i = 0; i < collectives.size(); ++i) render_collective(out, collectives[i], i, opt);
    if (runs.empty() && matrices.empty() && collectives.empty())
        out += "<p>Nothing to report: no runs, matrices or collective runs were given.</p>\n";

    fmt::format_to(std::back_inserter(out),
                   "<footer>meshperf {} · rates in Gbit/s = 10⁹ bit/s and GB/s = 10⁹ B/s; sizes in IEC units "
                   "(1 KiB = 1024 B); latency is one-way (RTT/2). Models: t(n) = α + n/β, see "
                   "docs/capacity-planning.md.</footer>\n</body>\n</html>\n",
                   MESHPERF_VERSION);
    return out;
}

}  // namespace meshperf::client
