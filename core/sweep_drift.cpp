#include "core/sweep_drift.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <string_view>

namespace meshperf::core {

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
    double mean = 0;
    for (double v : p50) mean += v;
    mean /= static_cast<double>(n);
    double squares = 0;
    for (double v : p50) squares += (v - mean) * (v - mean);
    const double sd = std::sqrt(squares / static_cast<double>(n - 1));
    // The 95% prediction interval of one more reading: where the same point, measured at
    // another moment of the sweep, would fall.
    return t_quantile_95(n - 1) * sd * std::sqrt(1 + 1.0 / static_cast<double>(n)) / mean;
}

namespace {

/// Keeps `rel` as the point's drift figure (the widest seen) and reports it instead of the
/// point's own interval when it is wider; true then.
bool widen_to_drift(point_result& p, double rel) {
    auto& pr = p.precision;
    pr.drift_achieved = std::isfinite(pr.drift_achieved) ? std::max(pr.drift_achieved, rel) : rel;
    if (!(rel > pr.achieved)) return false;
    pr.achieved = rel;
    pr.method = precision_method::drift;
    if (pr.adaptive) pr.met = pr.met && rel <= pr.target;
    return true;
}

}  // namespace

void record_reading(sweep_drift& d, std::size_t after_point, const point_result& p) {
    if (!p.rtt_ns) throw insane_figure(fmt::format("the {} drift reference has no round-trip figures", format_size(p.size_bytes)));
    d.readings.push_back({after_point, p.rtt_ns->p50});
}

void settle(sweep_drift& d) {
    std::vector<double> v;
    for (const auto& r : d.readings) v.push_back(r.rtt_ns_p50);
    d.relative_half_width = drift_half_width(v);
}

void apply_drift(run_result& run, const sweep_drift& d) {
    if (!std::isfinite(d.relative_half_width)) return;
    std::size_t widened = 0;
    for (auto& p : run.points)
        if (p.test == d.test && widen_to_drift(p, d.relative_half_width)) ++widened;
    if (widened == 0) return;
    const auto [lo, hi] = std::minmax_element(d.readings.begin(), d.readings.end(),
                                              [](const auto& a, const auto& b) { return a.rtt_ns_p50 < b.rtt_ns_p50; });
    run.warnings.push_back(fmt::format(
        "{} drifted during the sweep: the {} reference, measured {} times, read {}..{} µs one-way (±{}%), "
        "more than {} of {} points' own intervals; their precision includes the drift (marked d)",
        to_string(d.test), format_size(d.size_bytes), d.readings.size(), core::plain_number(lo->rtt_ns_p50 / 2e3, 3), core::plain_number(hi->rtt_ns_p50 / 2e3, 3),
        core::plain_number(d.relative_half_width * 100, 2), widened, run.spec.sizes.size()));
}

std::vector<std::size_t> points_to_recheck(const run_result& run, test_kind test) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < run.points.size(); ++i)
        if (run.points[i].test == test && run.points[i].rtt_ns) idx.push_back(i);
    std::vector<std::size_t> out;
    auto add = [&](std::size_t i) {
        if (out.size() < max_rechecks && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    };
    for (std::size_t k = 0; k + 1 < idx.size(); ++k) {
        const auto& a = run.points[idx[k]];
        const auto& b = run.points[idx[k + 1]];
        const double hw = a.precision.achieved * a.rtt_ns->p50 + b.precision.achieved * b.rtt_ns->p50;
        if (std::isfinite(hw) && b.rtt_ns->p50 < a.rtt_ns->p50 - hw) {
            add(idx[k]);
            add(idx[k + 1]);
        }
    }
    return out;
}

void apply_recheck(run_result& run, sweep_drift& d, std::size_t index, const point_result& again) {
    auto& p = run.points.at(index);
    if (!p.rtt_ns || !again.rtt_ns) throw insane_figure("a rechecked latency point has no round-trip figures");
    const double first = p.rtt_ns->p50, second = again.rtt_ns->p50;
    if (!(first > 0) || !(second > 0) || !std::isfinite(first) || !std::isfinite(second))
        throw insane_figure(fmt::format("rechecked point read {} and {} ns", first, second));
    d.rechecks.push_back({p.size_bytes, first, second});
    if (!widen_to_drift(p, std::abs(second - first) / first)) return;
    // One warning per point, naming every reading of it (rechecks run in rounds).
    constexpr std::string_view prefix = "measured again because";
    std::erase_if(p.warnings, [&](const std::string& w) { return w.starts_with(prefix); });
    std::string readings;
    for (const auto& r : d.rechecks)
        if (r.size_bytes == p.size_bytes) readings += fmt::format("{}{}", readings.empty() ? "" : ", ", core::plain_number(r.again_rtt_ns_p50 / 2e3, 3));
    p.warnings.push_back(fmt::format("{} the curve fell after it by more than the stated precision: read {} µs, then {} µs "
                                     "one-way; its precision covers them",
                                     prefix, core::plain_number(first / 2e3, 3), readings));
}

}  // namespace meshperf::core
