#pragma once
/// Statistics on measured samples: order statistics, confidence intervals, and a log-linear
/// histogram for sample counts beyond what is kept exactly. Pure functions, no I/O.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace meshperf::core {

/// Distribution summary of a set of samples, in the samples' unit.
struct summary {
    std::uint64_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0, stdev = 0;
};

/// Percentile q in [0, 1] of ascending-sorted data, by linear interpolation between closest
/// ranks (the definition numpy calls "linear"). Requires non-empty data.
double percentile_sorted(std::span<const double> sorted, double q);

/// Summary of samples; sorts them in place. stdev is the sample standard deviation (n-1).
/// Requires at least one sample.
summary summarize(std::span<double> samples);

/// Half-width of the distribution-free 95% confidence interval of the median of
/// ascending-sorted data (order statistics at ranks floor(n/2 - 0.98·sqrt n) and ceil(1 + n/2 + 0.98·sqrt n), 1-based). Returns +inf when
/// there are too few samples (n < 6) for such an interval.
double median_ci_half_width_sorted(std::span<const double> sorted);

/// Two-sided 95% Student-t quantile for the given degrees of freedom (>= 1).
double t_quantile_95(std::size_t dof);

/// Half-width of the 95% confidence interval of the mean of values (Student t). Returns
/// +inf for fewer than two values.
double mean_ci_half_width(std::span<const double> values);

/// Arithmetic mean; 0 for no values.
double mean(std::span<const double> values);

/// Log-linear histogram of positive values with relative bucket width under 1%: values are
/// kept exactly below 128 and in 128 sub-buckets per power of two above. Memory is fixed
/// at construction; add() neither allocates nor throws.
class log_histogram {
public:
    log_histogram();
    /// Adds one value (negative values count as 0).
    void add(std::uint64_t value) noexcept;
    std::uint64_t count() const { return count_; }
    /// Value at quantile q in [0, 1]: the midpoint of the bucket holding that rank, within
    /// 1% of the true sample. Requires count() > 0.
    double quantile(double q) const;
    double min() const { return static_cast<double>(min_); }
    double max() const { return static_cast<double>(max_); }
    double mean() const;
    double stdev() const;
    /// Summary from the histogram (percentiles within 1%, mean and stdev exact).
    summary summarize() const;

private:
    static constexpr int sub_bits = 7;  // 128 sub-buckets per octave: < 0.8% relative width
    static std::size_t index_of(std::uint64_t v) noexcept;
    static double midpoint_of(std::size_t index) noexcept;
    std::vector<std::uint64_t> buckets_;
    std::uint64_t count_ = 0, min_ = ~0ull, max_ = 0;
    long double sum_ = 0, sum_sq_ = 0;
};

}  // namespace meshperf::core
