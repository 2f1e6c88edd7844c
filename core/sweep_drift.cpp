#include "core/sweep_drift.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

bool wants_drift_check(const run_spec& s, test_kind t) {
    return t == test_kind::latency && s.sizes.size() >= drift_min_sizes;
}

bool reference_due(std::size_t done, std::size_t sizes) {
    return done > 0 && done <= sizes && (done % drift_reference_every == 0 || done == sizes);
}

double drift_half_width(std::span<const double> p50) {
    for (double v : p50)
        if (!std::isfinite(v) || v <= 0) throw insane_figure(fmt::format("reference reading {} ns", v));
    const std::size_t n = p50.size();
    if (n < drift_min_readings) return std::numeric_limits<double>::infinity();
    std::vector<double> sorted(p50.begin(), p50.end());
    std::sort(sorted.begin(), sorted.end());
    const double median = percentile_sorted(sorted, 0.5);
    const double half_range = (sorted.back() - sorted.front()) / 2;
    return half_range / median * (n + 1.0) / (n - 1.0);
}

void settle(sweep_drift& d) {
    std::vector<double> v;
    for (const auto& r : d.readings) v.push_back(r.rtt_ns_p50);
    d.relative_half_width = drift_half_width(v);
}

void apply_drift(run_result& run, const sweep_drift& d) {
    if (!std::isfinite(d.relative_half_width)) return;
    std::size_t widened = 0;
    for (auto& p : run.points) {
        if (p.test != d.test) continue;
        p.precision.drift_achieved = d.relative_half_width;
        if (!(d.relative_half_width > p.precision.achieved)) continue;
        p.precision.achieved = d.relative_half_width;
        p.precision.method = precision_method::drift;
        if (p.precision.adaptive) p.precision.met = p.precision.met && d.relative_half_width <= p.precision.target;
        ++widened;
    }
    if (widened == 0) return;
    const auto [lo, hi] = std::minmax_element(d.readings.begin(), d.readings.end(),
                                              [](const auto& a, const auto& b) { return a.rtt_ns_p50 < b.rtt_ns_p50; });
    run.warnings.push_back(fmt::format(
        "{} drifted during the sweep: the {} reference, measured {} times, read {:.3g}..{:.3g} µs one-way (±{:.2g}%), "
        "more than {} of {} points' own intervals; their precision includes the drift (marked d)",
        to_string(d.test), format_size(d.size_bytes), d.readings.size(), lo->rtt_ns_p50 / 2e3, hi->rtt_ns_p50 / 2e3,
        d.relative_half_width * 100, widened, run.spec.sizes.size()));
}

json to_json(const sweep_drift& d) {
    json readings = json::array();
    for (const auto& r : d.readings) readings.push_back({{"after_point", r.after_point}, {"rtt_ns_p50", r.rtt_ns_p50}});
    return {{"test", to_string(d.test)},
            {"size_bytes", d.size_bytes},
            {"readings", readings},
            {"relative_half_width", std::isfinite(d.relative_half_width) ? json(d.relative_half_width) : json(nullptr)}};
}

sweep_drift sweep_drift_from_json(const json& j) {
    try {
        sweep_drift d;
        d.test = parse_test_kind(j.at("test").get<std::string>());
        d.size_bytes = j.at("size_bytes").get<std::uint64_t>();
        for (const auto& r : j.at("readings"))
            d.readings.push_back({r.at("after_point").get<std::size_t>(), r.at("rtt_ns_p50").get<double>()});
        const auto& w = j.at("relative_half_width");
        d.relative_half_width = w.is_null() ? std::numeric_limits<double>::infinity() : w.get<double>();
        return d;
    } catch (const json::exception& e) {
        throw spec_error(fmt::format("drift: {}", e.what()));
    }
}

}  // namespace meshperf::core
