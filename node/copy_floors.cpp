#include "node/copy_floors.hpp"

#include "core/sizes.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::node {

using nlohmann::json;

namespace {

/// The GPU end of one per-GPU result: dst for h2d, src otherwise.
std::string gpu_of(const json& r, const std::string& copy) {
    const auto end_field = r.value(copy == "h2d" ? "dst" : "src", json());
    const auto end = end_field.is_string() ? end_field.get<std::string>() : std::string();
    return end.empty() ? "an unnamed GPU" : end;
}

}  // namespace

std::vector<gpu_copy_figure> all_gpu_copy_figures(const json& doc) {
    std::vector<gpu_copy_figure> out;
    if (!doc.is_object() || !doc.contains("all_gpus") || !doc["all_gpus"].is_array()) return out;
    for (const auto& run : doc["all_gpus"]) {
        if (!run.is_object()) continue;
        const auto copy = run.value("copy", json()).is_string() ? run["copy"].get<std::string>() : std::string("?");
        // The largest size every GPU measured: the last combined point.
        const auto points = run.value("points", json::array());
        const json last = points.is_array() && !points.empty() ? points.back() : json();
        const std::uint64_t size =
            last.is_object() && last.value("size_bytes", json()).is_number_unsigned() ? last["size_bytes"].get<std::uint64_t>() : 0;
        const auto per_gpu = run.value("per_gpu", json::array());
        if (!per_gpu.is_array()) continue;
        for (const auto& r : per_gpu) {
            if (!r.is_object()) continue;
            gpu_copy_figure f{copy, gpu_of(r, copy), size, 0, r.value("verify_failed", json()).is_boolean() && r["verify_failed"].get<bool>()};
            for (const auto& p : r.value("points", json::array()))
                if (p.is_object() && size > 0 && p.value("size_bytes", json()) == size && p.value("gb_per_s", json()).is_number())
                    f.gb_per_s = p["gb_per_s"].get<double>();
            out.push_back(std::move(f));
        }
    }
    return out;
}

std::vector<copy_floor_finding> judge_copy_floors(const json& doc, const node_manifest& expect) {
    std::vector<copy_floor_finding> out;
    const auto figures = all_gpu_copy_figures(doc);
    for (const auto& [copy, floor] : {std::pair{std::string("h2d"), expect.h2d_floor_gb_per_s},
                                      std::pair{std::string("d2h"), expect.d2h_floor_gb_per_s}}) {
        if (!floor) continue;
        bool ran = false;
        for (const auto& g : figures) {
            if (g.copy != copy) continue;
            ran = true;
            out.push_back({copy, g.gpu, g.size_bytes, g.gb_per_s, *floor, !(g.gb_per_s >= *floor)});
        }
        if (!ran) out.push_back({copy, "every GPU", 0, 0, *floor, true});  // asked for a floor, not measured
    }
    return out;
}

copy_floor_verdict copy_floor_text(const std::vector<copy_floor_finding>& findings) {
    copy_floor_verdict v;
    if (findings.empty()) return v;
    std::size_t below = 0;
    std::string lines;
    for (const auto& f : findings) {
        if (!f.below) continue;
        ++below;
        if (f.size_bytes == 0)
            lines += fmt::format("  {} {}: not measured (floor {:.1f} GB/s)\n", f.copy, f.gpu, f.floor_gb_per_s);
        else
            lines += fmt::format("  {} {}: {:.2f} GB/s at {} with every GPU copying, below the floor {:.1f} GB/s ({:.0f}%)\n",
                                 f.copy, f.gpu, f.gb_per_s, core::format_size(f.size_bytes), f.floor_gb_per_s,
                                 100.0 * f.gb_per_s / f.floor_gb_per_s);
    }
    v.exit_code = below ? 2 : 0;
    v.text = fmt::format("copy floors: {} GPU figure{}, {} below: {}\n", findings.size(), findings.size() == 1 ? "" : "s", below,
                         below ? "CRITICAL" : "OK") +
             lines;
    return v;
}

}  // namespace meshperf::node
