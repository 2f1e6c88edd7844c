#include "node/gpu_copy_check.hpp"

#include "core/sizes.hpp"

#include <fmt/format.h>
#include <map>

namespace meshperf::node {

using core::check_state;

namespace {

/// The floor of `copy` in `expect`; 0 when there is none (a manifest's floor is above 0).
double floor_of(const std::string& copy, const std::optional<node_manifest>& expect) {
    if (!expect) return 0;
    if (copy == "h2d") return expect->h2d_floor_gb_per_s.value_or(0);
    if (copy == "d2h") return expect->d2h_floor_gb_per_s.value_or(0);
    return 0;
}

finding judge(const gpu_copy_figure& g, std::size_t gpus, double floor, const std::string& stopped) {
    finding f{check_state::ok, "gpu_copy", fmt::format("GPU {} {}", g.gpu, g.copy), ""};
    const auto with = gpus > 1 ? fmt::format("with all {} GPUs copying", gpus) : std::string("on the node's one GPU");
    if (g.verify_failed) {
        f.state = check_state::critical;
        f.message = fmt::format("{} copies {} delivered differing bytes: the data was corrupted on the way", g.copy, with);
    } else if (!(g.gb_per_s > 0)) {
        f.state = stopped.empty() ? check_state::critical : check_state::unknown;
        f.message = stopped.empty() ? fmt::format("{} measured nothing {}", g.copy, with)
                                    : fmt::format("{} not measured: {}", g.copy, stopped);
    } else if (g.gb_per_s < floor) {
        f.state = check_state::critical;
        f.message = fmt::format("{} {:.2f} GB/s at {} {}, below the manifest's floor of {:g} GB/s ({:.0f}%)", g.copy,
                                g.gb_per_s, core::format_size(g.size_bytes), with, floor, 100 * g.gb_per_s / floor);
    } else {
        f.message = fmt::format("{} {:.2f} GB/s at {} {}, verified{}", g.copy, g.gb_per_s, core::format_size(g.size_bytes), with,
                                floor > 0 ? fmt::format(" (floor {:g} GB/s)", floor) : std::string());
    }
    return f;
}

}  // namespace

core::local_copy_spec inspect_copy_spec() {
    core::local_copy_spec s;
    s.copies = "h2d,d2h";
    s.sizes = {inspect_copy_size};
    s.verify = true;
    s.all_gpus = true;
    return s;
}

void add_gpu_copy_findings(inspect_result& r, const gpu_copy_survey& survey, const std::optional<node_manifest>& expect) {
    const auto figures = survey.sweep.is_null() ? std::vector<gpu_copy_figure>{} : all_gpu_copy_figures(survey.sweep);
    if (figures.empty()) {
        const bool fault = survey.device_fault;
        const auto why = !survey.none_because.empty() ? survey.none_because
                         : survey.sweep.is_null()     ? std::string("no reason given")
                                                      : std::string("the sweep's document lists no GPU");
        r.findings.push_back({fault ? check_state::critical : check_state::unknown, "gpu_copy", "GPUs",
                              fmt::format("{}: {}", fault ? "host<->GPU copies failed" : "no host<->GPU copy measured", why)});
    }
    const auto stopped = survey.sweep.is_object() && survey.sweep.value("stopped", nlohmann::json()).is_string()
                             ? survey.sweep["stopped"].get<std::string>()
                             : std::string();
    std::map<std::string, std::size_t> gpus_of;  // GPUs per direction, for "with all N GPUs copying"
    for (const auto& g : figures) ++gpus_of[g.copy];
    for (const auto& g : figures) {
        r.findings.push_back(judge(g, gpus_of[g.copy], floor_of(g.copy, expect), stopped));
        r.gpu_copies.push_back(g);
    }
    // A floor for a direction the sweep did not give is not a pass.
    if (!figures.empty())
        for (const auto* copy : {"h2d", "d2h"}) {
            const double floor = floor_of(copy, expect);
            if (floor > 0 && !gpus_of.contains(copy))
                r.findings.push_back({check_state::critical, "gpu_copy", fmt::format("GPUs {}", copy),
                                      fmt::format("the manifest sets a {} floor of {:g} GB/s and no GPU measured {}", copy, floor, copy)});
        }
    for (const auto& f : r.findings) r.state = core::worst(r.state, f.state);
}

}  // namespace meshperf::node
