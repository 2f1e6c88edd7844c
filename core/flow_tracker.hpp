#pragma once
/// Turns receiver counter snapshots of one flow (one direction, one or more streams) into
/// interval rates, a precision estimate and final figures. Pure: the caller supplies times
/// (seconds on the receiver's clock, since the point started) and byte counts.
#include "core/result.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace meshperf::core {

class flow_tracker {
public:
    /// streams: number of streams in the flow; warmup_s: snapshots before this time are
    /// warm-up; the first snapshot at or after it is the baseline of the measured window.
    flow_tracker(std::size_t streams, double warmup_s);

    /// Adds a snapshot: t_s on the receiver's clock, cumulative bytes per stream. Snapshots
    /// must come in time order; a snapshot not later than the previous one is ignored.
    void add(double t_s, std::span<const std::uint64_t> bytes_per_stream);

    /// True once the baseline is taken (the warm-up is over).
    bool warmed_up() const { return !times_.empty(); }
    /// Number of measured intervals (snapshots after the baseline).
    std::size_t intervals() const { return times_.empty() ? 0 : times_.size() - 1; }
    /// Seconds from the baseline to the last snapshot.
    double measured_s() const;
    /// Mean of the interval rates in bytes/s (0 before two snapshots).
    double mean_interval_rate() const;
    /// 95% CI half-width of the mean interval rate relative to it, the intervals taken as
    /// independent (+inf with < 2 intervals or a zero rate).
    double relative_half_width() const;
    /// The flow's precision: the interval above, widened to the batch-means interval of
    /// consecutive intervals grouped into at most max_blocks blocks when those disagree
    /// more (see choose_interval).
    interval_choice precision() const;
    /// Each block's mean interval rate, Gbit/s, in time order.
    std::vector<double> block_gbit_per_s() const;
    /// Final figures over the measured window: bytes and seconds from the baseline to the
    /// last snapshot. Throws insane_figure when nothing moved in the window.
    flow_figures figures(const std::string& direction, std::uint64_t size_bytes) const;
    /// True once any byte of the flow has arrived, warm-up included.
    bool has_bytes() const;
    /// True when the measured window holds no bytes (or no interval): a path far slower than
    /// the point's time cap can measure, whose bytes arrived only in the warm-up, or none.
    bool window_empty() const;
    /// Figures over the whole point instead of the window: every byte the receivers counted
    /// from the start (time 0, no bytes) to the last snapshot, warm-up included, for a flow
    /// whose window is empty. Throws insane_figure when no byte arrived at all.
    flow_figures whole_point_figures(const std::string& direction, std::uint64_t size_bytes) const;
    /// The same snapshots with the streams marked in `dropped` counting no bytes (a failed
    /// rail's streams left out of the window); `dropped` has one entry per stream.
    flow_tracker without_streams(const std::vector<bool>& dropped) const;

private:
    std::size_t streams_;
    double warmup_s_;
    double last_t_ = -1;
    std::vector<std::uint64_t> last_bytes_;       // the latest snapshot, warm-up ones too
    std::vector<double> times_;                   // baseline first
    std::vector<std::vector<std::uint64_t>> bytes_;  // per snapshot, per stream
    std::vector<double> interval_rates_;          // bytes/s
    block_means blocks_;                          // the same rates, grouped
};

/// Figures of one flow measured over a fixed message count: bytes moved after the warm-up
/// per stream, and the window from the earliest measure-begin to the latest end (ns on the
/// receiver's clock).
flow_figures fixed_count_figures(const std::string& direction, std::uint64_t size_bytes,
                                 std::span<const std::uint64_t> measured_bytes_per_stream,
                                 std::span<const std::int64_t> begin_ns, std::span<const std::int64_t> end_ns);

}  // namespace meshperf::core
