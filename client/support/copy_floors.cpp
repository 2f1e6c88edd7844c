#include "client/support/copy_floors.hpp"

#include "core/sizes.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The GPU end of one per-GPU result: dst for h2d, src otherwise.
std::string gpu_of(const json& r, const std::string& copy) {
    const auto& end = r.value(copy == "h2d" ? "dst" : "src", std::string());
    return end.empty() ? "an unnamed GPU" : end;
}

}  // namespace

std::vector<copy_floor_finding> judge_copy_floors(const json& doc, const node::node_manifest& expect) {
    std::vector<copy_floor_finding> out;
    const auto all = doc.is_object() ? doc.value("all_gpus", json::array()) : json::array();
    for (const auto& [copy, floor] : {std::pair{std::string("h2d"), expect.h2d_floor_gb_per_s},
                                      std::pair{std::string("d2h"), expect.d2h_floor_gb_per_s}}) {
        if (!floor) continue;
        const json* run = nullptr;
        for (const auto& a : all)
            if (a.is_object() && a.value("copy", std::string()) == copy) run = &a;
        if (!run) {
            out.push_back({copy, "every GPU", 0, 0, *floor, true});  // asked for a floor, not measured
            continue;
        }
        // The largest size every GPU measured: the last combined point.
        const auto points = run->value("points", json::array());
        const std::uint64_t size = points.empty() ? 0 : points.back().value("size_bytes", std::uint64_t{0});
        for (const auto& r : run->value("per_gpu", json::array())) {
            copy_floor_finding f{copy, gpu_of(r, copy), size, 0, *floor, true};
            for (const auto& p : r.value("points", json::array()))
                if (p.value("size_bytes", std::uint64_t{0}) == size && size > 0) f.gb_per_s = p.value("gb_per_s", 0.0);
            f.below = !(f.gb_per_s >= *floor);
            out.push_back(std::move(f));
        }
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

}  // namespace meshperf::client
