#include "analysis/model_warnings.hpp"
#include "core/figure_text.hpp"

#include "core/sizes.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::analysis {
namespace {

std::string size_text(double bytes) {
    return core::format_size(static_cast<std::uint64_t>(std::llround(std::max(bytes, 1.0))));
}

// "all_reduce ring, all_gather ring and 2 more"
std::string names(const std::vector<const model_use*>& uses) {
    std::string out;
    const std::size_t shown = std::min<std::size_t>(uses.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + uses[i]->what;
    if (uses.size() > shown) out += fmt::format(" and {} more", uses.size() - shown);
    return out;
}

}  // namespace

std::vector<model_warning> model_use_warnings(const model_fit& m, std::span<const model_use> uses) {
    std::vector<model_warning> out;
    const double lo = static_cast<double>(m.line.min_size_bytes), hi = static_cast<double>(m.line.max_size_bytes);
    std::vector<const model_use*> above, below;
    for (const auto& u : uses) {
        if (!(u.message_bytes > 0)) continue;
        if (hi > 0 && u.message_bytes > hi * max_extrapolation_factor) above.push_back(&u);
        if (lo > 0 && u.message_bytes < lo / max_extrapolation_factor) below.push_back(&u);
    }
    const auto by_size = [](const model_use* a, const model_use* b) { return a->message_bytes < b->message_bytes; };
    if (!above.empty()) {
        std::stable_sort(above.begin(), above.end(), [&](auto a, auto b) { return by_size(b, a); });
        const double far = above.front()->message_bytes;
        out.push_back({"extrapolation_above",
                       fmt::format("{} prediction{} ({}) use{} the model on messages of up to {}, {}× the largest measured size "
                                   "{} (more than {}×): sweep up to {} to measure it",
                                   above.size(), above.size() == 1 ? "" : "s", names(above), above.size() == 1 ? "s" : "",
                                   size_text(far), core::plain_number(far / hi, 3), size_text(hi), core::plain_number(max_extrapolation_factor, 6), size_text(far))});
    }
    if (!below.empty()) {
        std::stable_sort(below.begin(), below.end(), by_size);
        const double near = below.front()->message_bytes;
        out.push_back({"extrapolation_below",
                       fmt::format("{} prediction{} ({}) use{} the model on messages as small as {}, 1/{} of the smallest "
                                   "measured size {} (more than {}× below): sweep down to {} to measure it",
                                   below.size(), below.size() == 1 ? "" : "s", names(below), below.size() == 1 ? "s" : "",
                                   size_text(near), core::plain_number(lo / near, 3), size_text(lo), core::plain_number(max_extrapolation_factor, 6), size_text(near))});
    }
    if (m.beta_unmeasured()) out.push_back({"beta_above_measured", m.beta_measured->message()});
    if (m.line.underdetermined) {
        out.push_back({"underdetermined",
                       fmt::format("the model is underdetermined: {} points for {} parameters (or fewer than 3 sizes), so the "
                                   "line passes through them whatever the path does and nothing checks α and β; sweep more "
                                   "sizes (e.g. --sizes 1..4M)",
                                   m.line.points, m.line.parameters)});
    } else {
        const bool segments = m.piecewise.has_value();
        const double worst = segments ? m.piecewise->worst_rel_residual : m.line.worst_rel_residual;
        const auto at = segments ? m.piecewise->worst_size_bytes : m.line.worst_size_bytes;
        if (worst > m.piecewise_threshold)
            out.push_back({"poor_fit", fmt::format("the model fits poorly: it misses the measured time at {} by {:.0f}% (more than "
                                                   "{:.0f}%), so its predictions are rough{}",
                                                   core::format_size(at), worst * 100, m.piecewise_threshold * 100,
                                                   !segments && !m.piecewise_rejected.empty()
                                                       ? fmt::format("; no break explains it: {}", m.piecewise_rejected)
                                                       : std::string())});
    }
    return out;
}

nlohmann::json to_json(const model_warning& w) { return {{"kind", w.kind}, {"message", w.message}}; }

}  // namespace meshperf::analysis
