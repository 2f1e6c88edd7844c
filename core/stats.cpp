#include "core/stats.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace meshperf::core {

double percentile_sorted(std::span<const double> sorted, double q) {
    assert(!sorted.empty());
    q = std::clamp(q, 0.0, 1.0);
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double mean(std::span<const double> values) {
    if (values.empty()) return 0.0;
    long double s = 0;
    for (double v : values) s += v;
    return static_cast<double>(s / static_cast<long double>(values.size()));
}

summary summarize(std::span<double> samples) {
    assert(!samples.empty());
    std::sort(samples.begin(), samples.end());
    summary s;
    s.count = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.p50 = percentile_sorted(samples, 0.50);
    s.p90 = percentile_sorted(samples, 0.90);
    s.p99 = percentile_sorted(samples, 0.99);
    s.p999 = percentile_sorted(samples, 0.999);
    s.mean = mean(samples);
    if (samples.size() > 1) {
        long double ss = 0;
        for (double v : samples) ss += (v - s.mean) * (v - s.mean);
        s.stdev = static_cast<double>(std::sqrt(ss / static_cast<long double>(samples.size() - 1)));
    }
    return s;
}

double median_ci_half_width_sorted(std::span<const double> sorted) {
    const auto n = sorted.size();
    if (n < 6) return std::numeric_limits<double>::infinity();
    // Order statistics bounding the median with at least 95% coverage (Conover, Practical
    // Nonparametric Statistics): 1-based ranks floor(n/2 - 0.98 sqrt n) and
    // ceil(1 + n/2 + 0.98 sqrt n), clamped to the data.
    const double half = 1.959964 * std::sqrt(static_cast<double>(n)) / 2.0;
    const double centre = static_cast<double>(n) / 2.0;
    const auto lo1 = static_cast<std::ptrdiff_t>(std::floor(centre - half));
    const auto hi1 = static_cast<std::ptrdiff_t>(std::ceil(1.0 + centre + half));
    const auto lo = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(lo1 - 1, 0, static_cast<std::ptrdiff_t>(n - 1)));
    const auto hi = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(hi1 - 1, 0, static_cast<std::ptrdiff_t>(n - 1)));
    return (sorted[hi] - sorted[lo]) / 2.0;
}

double t_quantile_95(std::size_t dof) {
    static constexpr double table[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                       2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                       2.080,  2.074,  2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0) return std::numeric_limits<double>::infinity();
    if (dof <= 30) return table[dof];
    // Beyond 30 degrees of freedom: the normal quantile with a first-order correction.
    return 1.959964 + 2.37 / static_cast<double>(dof);
}

double mean_ci_half_width(std::span<const double> values) {
    const auto n = values.size();
    if (n < 2) return std::numeric_limits<double>::infinity();
    const double m = mean(values);
    long double ss = 0;
    for (double v : values) ss += (v - m) * (v - m);
    const double sd = static_cast<double>(std::sqrt(ss / static_cast<long double>(n - 1)));
    return t_quantile_95(n - 1) * sd / std::sqrt(static_cast<double>(n));
}

// --- block_means ---------------------------------------------------------------------

block_means::block_means() { sums_.reserve(max_blocks); }

void block_means::add(double v) noexcept {
    ++batches_;
    partial_sum_ += v;
    if (++partial_n_ < per_block_) return;
    if (sums_.size() == max_blocks) {
        // Full: neighbours merge into blocks twice as long, and the batches just completed
        // become the first half of the next block.
        for (std::size_t i = 0; i < max_blocks / 2; ++i) sums_[i] = sums_[2 * i] + sums_[2 * i + 1];
        sums_.resize(max_blocks / 2);
        per_block_ *= 2;
        return;
    }
    sums_.push_back(partial_sum_);  // within the reserved capacity
    partial_sum_ = 0;
    partial_n_ = 0;
}

std::vector<double> block_means::means() const {
    std::vector<double> out;
    out.reserve(sums_.size() + 1);
    for (double s : sums_) out.push_back(s / static_cast<double>(per_block_));
    if (sums_.size() < max_blocks && partial_n_ > 0 && 2 * partial_n_ >= per_block_) out.push_back(partial_sum_ / static_cast<double>(partial_n_));
    return out;
}

const char* to_string(precision_method m) {
    switch (m) {
        case precision_method::samples: return "samples";
        case precision_method::blocks: return "blocks";
        case precision_method::too_few_blocks: return "too_few_blocks";
        case precision_method::drift: return "drift";
    }
    return "samples";
}

std::optional<precision_method> parse_precision_method(std::string_view s) {
    if (s == "samples") return precision_method::samples;
    if (s == "blocks") return precision_method::blocks;
    if (s == "too_few_blocks") return precision_method::too_few_blocks;
    if (s == "drift") return precision_method::drift;
    return std::nullopt;
}

interval_choice choose_interval(double samples_rel, std::span<const double> blocks, double estimate) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    interval_choice c;
    c.blocks = blocks.size();
    c.samples_relative_half_width = std::isfinite(samples_rel) && samples_rel >= 0 ? samples_rel : inf;
    c.blocks_relative_half_width = inf;
    if (blocks.size() >= min_blocks_to_assess && estimate > 0 && std::isfinite(estimate)) {
        const double hw = mean_ci_half_width(blocks);
        if (std::isfinite(hw)) c.blocks_relative_half_width = hw / estimate;
    }
    if (!std::isfinite(c.blocks_relative_half_width)) {
        c.method = precision_method::too_few_blocks;
        c.relative_half_width = c.samples_relative_half_width;
    } else if (!std::isfinite(c.samples_relative_half_width) ||
               c.blocks_relative_half_width > block_dominance_ratio * c.samples_relative_half_width) {
        c.method = precision_method::blocks;
        c.relative_half_width = c.blocks_relative_half_width;
    } else {
        c.method = precision_method::samples;
        c.relative_half_width = c.samples_relative_half_width;
    }
    return c;
}

bool target_met(const interval_choice& c, double target) {
    return c.blocks >= min_blocks_for_target && c.relative_half_width <= target;
}

// --- log_histogram -------------------------------------------------------------------

log_histogram::log_histogram() : buckets_((64 - sub_bits + 1) << sub_bits, 0) {}

std::size_t log_histogram::index_of(std::uint64_t v) noexcept {
    constexpr std::uint64_t linear_limit = 1ull << sub_bits;
    if (v < linear_limit) return static_cast<std::size_t>(v);
    const int msb = 63 - std::countl_zero(v);  // >= sub_bits
    const int shift = msb - sub_bits;
    const auto sub = static_cast<std::size_t>((v >> shift) & (linear_limit - 1));
    return (static_cast<std::size_t>(shift + 1) << sub_bits) + sub;
}

double log_histogram::midpoint_of(std::size_t index) noexcept {
    constexpr std::size_t linear_limit = 1u << sub_bits;
    if (index < linear_limit) return static_cast<double>(index);
    const int shift = static_cast<int>(index >> sub_bits) - 1;
    const auto sub = index & (linear_limit - 1);
    const double lo = std::ldexp(static_cast<double>(linear_limit + sub), shift);
    const double width = std::ldexp(1.0, shift);
    return lo + (width - 1.0) / 2.0;
}

void log_histogram::add(std::uint64_t value) noexcept {
    ++buckets_[index_of(value)];
    ++count_;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    const auto v = static_cast<long double>(value);
    sum_ += v;
    sum_sq_ += v * v;
}

double log_histogram::quantile(double q) const {
    assert(count_ > 0);
    q = std::clamp(q, 0.0, 1.0);
    const auto rank = static_cast<std::uint64_t>(std::floor(q * static_cast<double>(count_ - 1)));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        seen += buckets_[i];
        if (seen > rank) return std::clamp(midpoint_of(i), min(), max());
    }
    return max();
}

double log_histogram::mean() const {
    return count_ ? static_cast<double>(sum_ / static_cast<long double>(count_)) : 0.0;
}

double log_histogram::stdev() const {
    if (count_ < 2) return 0.0;
    const long double n = static_cast<long double>(count_);
    const long double var = (sum_sq_ - sum_ * sum_ / n) / (n - 1);
    return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

summary log_histogram::summarize() const {
    summary s;
    s.count = count_;
    if (!count_) return s;
    s.min = min();
    s.max = max();
    s.p50 = quantile(0.50);
    s.p90 = quantile(0.90);
    s.p99 = quantile(0.99);
    s.p999 = quantile(0.999);
    s.mean = mean();
    s.stdev = stdev();
    return s;
}

}  // namespace meshperf::core
