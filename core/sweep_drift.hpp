#pragma once
/// The sweep's drift check (docs/methodology.md, "Drift during a sweep"): a latency sweep
/// re-measures its first size, the reference, after every few points. On a host whose
/// latency moves in phases longer than a point (a VM's vCPU placement, host load), each
/// point sits in one phase and its own interval, however narrow, says nothing about the
/// others; the spread of the reference readings does. Every latency point's precision is
/// then at least that spread, marked `drift`, and the run warns. Nothing here does I/O.
#include "core/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace meshperf::core {

/// Fewest sizes of a latency test that get reference readings (fewer: nothing to compare).
inline constexpr std::size_t drift_min_sizes = 4;
/// The reference is measured again after every this many points of the test, and after its last.
inline constexpr std::size_t drift_reference_every = 4;
/// Fewest readings (the first point included) that give a drift figure.
inline constexpr std::size_t drift_min_readings = 3;

/// Whether a run's `test` gets reference readings: latency with at least drift_min_sizes sizes.
bool wants_drift_check(const run_spec&, test_kind);

/// Whether the reference is measured again after the `done`-th point (1-based) of a test of
/// `sizes` points: after every drift_reference_every points, and after the last.
bool reference_due(std::size_t done, std::size_t sizes);

/// The relative half-width of `rtt_p50_ns` readings as sweep_drift::relative_half_width
/// defines it (the 95% prediction interval of one more reading over their mean). Throws insane_figure for a reading that is not finite and positive.
double drift_half_width(std::span<const double> rtt_p50_ns);

/// Appends the median round trip of `p` (a measurement of the reference) as a reading taken
/// after point `after_point` of the test. Throws insane_figure when `p` has no round trip.
void record_reading(sweep_drift&, std::size_t after_point, const point_result& p);

/// Fills relative_half_width from the readings.
void settle(sweep_drift&);

/// Most points of a test measured again in one round.
inline constexpr std::size_t max_rechecks = 4;
/// Most rounds of re-measuring: each round re-measures the points the curve still falls from.
inline constexpr std::size_t max_recheck_rounds = 3;

/// Indices into run.points of the `test` points to measure again: both points of each pair
/// of neighbouring sizes where the larger size's median latency is below the smaller's by
/// more than their two stated half-widths (ping-pong latency does not fall with size; a
/// point caught in a short slow phase does). At most max_rechecks, in size order.
std::vector<std::size_t> points_to_recheck(const run_result& run, test_kind test);

/// Records a second measurement of run.points[index] in d.rechecks and widens that point's
/// precision to at least |again − first| / first (method drift): the point read both.
void apply_recheck(run_result& run, sweep_drift& d, std::size_t index, const point_result& again);

/// Widens the precision of every point of `d.test` whose own interval is narrower than the
/// drift (precision.method = drift, met re-judged against the target) and adds the run's
/// warning naming the reference and its range. Nothing changes when the drift is not
/// finite or no point is narrower.
void apply_drift(run_result&, const sweep_drift& d);

}  // namespace meshperf::core
