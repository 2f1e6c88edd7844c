#include "client/support/progress.hpp"

#include "analysis/matrix_schedule.hpp"
#include "core/sweep_drift.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

namespace {

/// Seconds a point of `test` may take: warm-up, cap, and for a stream test the close.
double test_point_bound_s(const core::run_spec& s, core::test_kind test) {
    const double close = test == core::test_kind::latency ? 0.0 : core::point_overrun_bound_s;
    return s.warmup_s + (s.duration_s ? *s.duration_s : s.max_point_s) + close;
}

}  // namespace

std::optional<double> point_time_bound_s(const core::run_spec& s) {
    if (s.iterations) return std::nullopt;
    double bound = 0;
    for (const auto t : s.tests) bound = std::max(bound, test_point_bound_s(s, t));
    return bound;
}

std::size_t reference_point_count(const core::run_spec& s) {
    std::size_t n = 0;
    for (auto t : s.tests) {
        if (!core::wants_drift_check(s, t)) continue;
        for (std::size_t done = 2; done <= s.sizes.size(); ++done) n += core::reference_due(done, s.sizes.size());
    }
    return n;
}

std::optional<double> sweep_time_bound_s(const core::run_spec& s) {
    if (s.iterations) return std::nullopt;
    // Drift reference readings are latency points (core::wants_drift_check).
    double total = static_cast<double>(reference_point_count(s)) * (test_point_bound_s(s, core::test_kind::latency) + point_overhead_s);
    for (const auto t : s.tests)
        total += static_cast<double>(s.sizes.size()) * (test_point_bound_s(s, t) + point_overhead_s);
    return total;
}

std::optional<double> estimate_seconds_left(std::size_t done, std::size_t total, double elapsed_s,
                                            std::optional<double> bound_s) {
    if (total == 0) return std::nullopt;
    if (done >= total) return 0.0;
    const auto left = static_cast<double>(total - done);
    double per_point = NAN;
    if (done > 0 && std::isfinite(elapsed_s) && elapsed_s > 0) per_point = elapsed_s / static_cast<double>(done);
    else if (bound_s && std::isfinite(*bound_s) && *bound_s > 0) per_point = *bound_s;
    const double s = per_point * left;
    if (!std::isfinite(s) || s < 0) return std::nullopt;
    return s;
}

double full_matrix_floor_s(std::size_t hosts, std::size_t parallel, double link_s) {
    if (hosts < 2) return 0;
    const auto rounds = static_cast<double>(analysis::round_count(hosts));
    const auto pairs = static_cast<double>(analysis::pairs_per_round(hosts));
    const auto waves = std::ceil(pairs / static_cast<double>(std::max<std::size_t>(parallel, 1)));
    return rounds * waves * 2 * link_s;
}

std::optional<double> seconds_left_at(double fraction_done, double elapsed_s) {
    if (!std::isfinite(fraction_done) || !std::isfinite(elapsed_s) || elapsed_s < 0 || fraction_done <= 0) return std::nullopt;
    if (fraction_done >= 1) return 0.0;
    const double s = elapsed_s * (1 - fraction_done) / fraction_done;
    if (!std::isfinite(s) || s < 0) return std::nullopt;
    return s;
}

namespace {

/// "52 s", "3 min", "1 h 5 min"; seconds >= 1.
std::string rounded_duration(double seconds) {
    if (seconds < 90) return fmt::format("{} s", std::max<long long>(1, std::llround(seconds)));
    const long long minutes = std::llround(seconds / 60);
    if (minutes < 90) return fmt::format("{} min", minutes);
    return fmt::format("{} h {} min", minutes / 60, minutes % 60);
}

}  // namespace

std::string about_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 1) return "under a second";
    return "about " + rounded_duration(seconds);
}

std::string phase_progress_line(const std::string& what, std::size_t k, std::size_t of, const std::string& unit,
                                std::size_t done, std::size_t total, double elapsed_s) {
    const std::size_t step = std::min(std::max<std::size_t>(k, 1), std::max<std::size_t>(of, 1));
    const std::size_t jobs_done = std::min(done, total);
    const double fraction = of && total ? (static_cast<double>(step - 1) + static_cast<double>(jobs_done) / static_cast<double>(total)) /
                                              static_cast<double>(of)
                                        : 0.0;
    std::string left;
    if (fraction >= 1) left = "done";
    else if (const auto s = seconds_left_at(fraction, elapsed_s)) left = about_duration(*s) + " left";
    return fmt::format("matrix: {} {} of {}, {} done {}/{} ({:.0f}%{}{})", what, k, of, unit, jobs_done, total,
                       std::floor(fraction * 100), left.empty() ? "" : ", ", left);
}

std::string progress_line(std::string line, std::size_t index, std::size_t total, double elapsed_s,
                          std::optional<double> bound_s) {
    const std::size_t done = std::min(index, total);
    const auto percent = total ? static_cast<unsigned>(done * 100 / total) : 100u;
    std::string tail;
    if (total && done >= total) {
        tail = std::isfinite(elapsed_s) && elapsed_s >= 1 ? "done in " + rounded_duration(elapsed_s) : std::string("done");
    } else if (const auto left = estimate_seconds_left(done, total, elapsed_s, bound_s)) {
        tail = about_duration(*left) + " left";
    } else {
        tail = "time left unknown";
    }
    // point_progress_line starts with "[  3/16]"; the share done goes right after it.
    const auto bracket = line.find(']');
    const auto share = fmt::format(" {:>3}%", percent);
    if (bracket != std::string::npos) line.insert(bracket + 1, share);
    else line = share + " " + line;
    return line + "  " + tail;
}

}  // namespace meshperf::client
