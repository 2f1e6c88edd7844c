#include "client/render/svg_collective.hpp"

#include "client/render/svg_panel.hpp"
#include "core/collective/figures.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace meshperf::client {
namespace {

using namespace plot;

std::string default_title(const core::collective_result& run) {
    return fmt::format("{} ranks, {} ({}): {}", run.spec.hosts.size(), run.spec.transport,
                       core::to_string(run.spec.element), run.id);
}

}  // namespace

std::string render_collective_svg(const core::collective_result& run, std::span<const std::optional<double>> predicted_time_s,
                                  const std::string& title) {
    panel time{"Time per iteration (slowest rank, mean)", "µs", "no sizes measured", {}, {}, {}};
    // GB/s, nccl-tests' unit, as the table and the CSV give busbw.
    panel busbw{"Bus bandwidth (busbw)", "GB/s", "no sizes measured", {}, {}, {}};
    std::vector<legend_entry> legend;
    std::map<std::pair<core::collective_op, core::collective_algo>, std::size_t> style_of;
    double x_lo = 0, x_hi = 0;
    std::size_t skipped = 0;
    bool predicted_any = false;
    for (std::size_t i = 0; i < run.points.size(); ++i) {
        const auto& pt = run.points[i];
        const auto key = std::make_pair(pt.op, pt.algo);
        if (!style_of.count(key)) {
            const auto style = style_of.size();
            style_of[key] = style;
            time.data.push_back({style, {}, {}, false});
            busbw.data.push_back({style, {}, {}, false});
            time.models.push_back({style, {}});
            busbw.models.push_back({style, {}});
            legend.push_back({style, fmt::format("{} ({})", core::to_string(pt.op), core::to_string(pt.algo)), "", false});
        }
        const auto s = style_of[key];
        const double x = static_cast<double>(pt.size_bytes);
        if (!plottable(pt.time_s) || !plottable(pt.busbw_gbyte_per_s)) {
            ++skipped;
            continue;
        }
        x_lo = x_lo == 0 ? x : std::min(x_lo, x);
        x_hi = std::max(x_hi, x);
        time.data[s].points.push_back({x, pt.time_s * 1e6});
        busbw.data[s].points.push_back({x, pt.busbw_gbyte_per_s});
        if (i < predicted_time_s.size() && predicted_time_s[i] && plottable(*predicted_time_s[i])) {
            const double t = *predicted_time_s[i];
            time.models[s].points.push_back({x, t * 1e6});
            busbw.models[s].points.push_back({x, core::gbyte_from_bytes_per_s_by_factor(core::busbw_bytes_per_s(pt.op, pt.ranks, pt.size_bytes, t))});
            predicted_any = true;
        }
    }
    if (x_hi <= x_lo) {  // one size (or none): a decade around it
        x_lo = x_hi > 0 ? x_hi / 4 : 1;
        x_hi = x_hi > 0 ? x_hi * 4 : 1024;
    }
    const double width = 960, panel_h = 360, title_h = 44, key_h = 20;
    std::string scratch;
    const double legend_h = draw_legend(scratch, legend, 0, width, false);
    const double note_h = skipped ? 22 : 0;
    const double height = title_h + legend_h + key_h + 2 * panel_h + note_h + 8;
    const auto heading = title.empty() ? default_title(run) : title;
    std::string out = svg::open_svg(width, height, heading);
    svg::text(out, 86, 30, heading, 20, "start", R"(font-weight="bold" fill="#111111")");
    draw_legend(out, legend, title_h, width, true);
    svg::text(out, 86, title_h + legend_h + 12,
              predicted_any ? "markers: measured (nccl-tests' time and busbw); dashed: α–β prediction"
                            : "markers: measured (nccl-tests' time and busbw)",
              12, "start", R"(fill="#555555")");
    double y = title_h + legend_h + key_h;
    draw_panel(out, time, x_lo, x_hi, y, width, panel_h);
    y += panel_h;
    draw_panel(out, busbw, x_lo, x_hi, y, width, panel_h);
    y += panel_h;
    if (skipped)
        svg::text(out, 86, y + 14, fmt::format("{} point(s) without a positive, finite figure are not drawn.", skipped), 12,
                  "start", R"(fill="#D55E00")");
    out += "</svg>\n";
    return out;
}

}  // namespace meshperf::client
