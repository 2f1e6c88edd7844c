#pragma once
/// Statistics on measured samples: order statistics, confidence intervals, and a log-linear
/// histogram for sample counts beyond what is kept exactly. Pure functions, no I/O.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
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

// --- Between-block variation (batch means) ----------------------------------------------
//
// Samples of one point are not independent: the scheduler, a migration or a change of the
// CPU a thread wakes on can hold a path in one state for many consecutive round trips. An
// interval computed from the samples as if they were independent is then far too narrow.
// The batch-means method groups consecutive batches into blocks, takes one estimate per
// block, and computes the interval of the mean of the block estimates (Student t with
// blocks − 1 degrees of freedom). It is wide when blocks disagree, whatever the samples
// inside each block do.

/// Most blocks a point's batches are grouped into: between 16 and 32 once a point has run
/// more than 16 batches (blocks double in length as batches arrive, so they stay equal).
inline constexpr std::size_t max_blocks = 32;
/// Fewest blocks that give a between-block interval at all (2 blocks: one degree of freedom).
inline constexpr std::size_t min_blocks_to_assess = 3;
/// Fewest blocks before an adaptive point may declare its precision target met.
inline constexpr std::size_t min_blocks_for_target = 8;
/// The between-block interval is reported instead of the within-sample one when it is wider
/// by more than this factor (with independent samples the two agree within about ±30% at
/// 8 blocks, ±15% at 32).
inline constexpr double block_dominance_ratio = 1.5;

/// Groups a stream of per-batch estimates into consecutive blocks of equal length with
/// fixed memory: blocks start one batch long, and when a block completes while max_blocks
/// are already complete, neighbours merge pairwise into blocks twice as long. A point of
/// any length thus ends with at most max_blocks blocks. add() neither allocates after
/// construction nor throws.
class block_means {
public:
    block_means();
    /// Adds one batch's estimate (the median of its round trips, or an interval's rate).
    void add(double batch_estimate) noexcept;
    /// Batches added so far.
    std::size_t batches() const { return batches_; }
    /// Batches per complete block.
    std::size_t batches_per_block() const { return per_block_; }
    /// The mean batch estimate of each block, in time order: the complete blocks, then the
    /// last partial block when it holds at least half a block's batches (and fewer than
    /// max_blocks blocks are complete).
    std::vector<double> means() const;

private:
    std::vector<double> sums_;  // complete blocks; capacity max_blocks
    double partial_sum_ = 0;
    std::size_t partial_n_ = 0, per_block_ = 1, batches_ = 0;
};

/// Which interval a point's precision reports.
enum class precision_method {
    samples,         ///< within-sample interval; the blocks agreed with it
    blocks,          ///< between-block interval: wider than the within-sample one by > block_dominance_ratio
    too_few_blocks,  ///< within-sample interval; fewer than min_blocks_to_assess blocks, so the
                     ///< variation between blocks was not assessed
    drift,           ///< the sweep's drift (core/sweep_drift.hpp): wider than the point's own interval
};

/// "samples", "blocks", "too_few_blocks", "drift".
const char* to_string(precision_method);
/// Inverse of to_string; nullopt for anything else.
std::optional<precision_method> parse_precision_method(std::string_view);

/// A point's precision from both views.
struct interval_choice {
    double relative_half_width = 0;  ///< the one reported (+inf when unknown)
    precision_method method = precision_method::too_few_blocks;
    std::size_t blocks = 0;          ///< block estimates used
    double samples_relative_half_width = 0;  ///< within-sample view (+inf when unknown)
    double blocks_relative_half_width = 0;   ///< between-block view (+inf with < min_blocks_to_assess blocks)
};

/// Combines the within-sample relative half-width with the batch-means interval of the
/// block estimates (relative to `estimate`, the point's reported figure). Reports the
/// between-block interval when it is wider than the within-sample one by more than
/// block_dominance_ratio (or when there is no within-sample interval), the within-sample
/// one otherwise; with fewer than
/// min_blocks_to_assess blocks, the within-sample one marked too_few_blocks.
interval_choice choose_interval(double samples_relative_half_width, std::span<const double> block_estimates, double estimate);

/// Whether an adaptive point may stop: at least min_blocks_for_target blocks, and the
/// reported relative half-width at or below the target.
bool target_met(const interval_choice&, double target);

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
