#pragma once
/// The ping side's whole latency point, for any transport: warm-up, then round trips in
/// batches until the precision target, the time cap, the fixed count or the fixed duration
/// is reached. Statistics are computed between batches, never per round trip. Each batch's
/// median also feeds the between-block interval (core/stats.hpp, block_means): the reported
/// precision is the wider view when the blocks disagree, and an adaptive point stops on its
/// target only after min_blocks_for_target batches. No I/O: the transport's batch function
/// does the round trips.
#include "core/result.hpp"
#include "core/run_spec.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace meshperf::core {

/// Most round-trip samples kept exactly; beyond it every sample goes into a log-linear
/// histogram (percentiles within 1%).
inline constexpr std::size_t max_exact_samples = 1u << 20;

struct latency_outcome {
    int code = 0;                   ///< 0, or the failure code the batch function returned
    summary rtt_ns;           ///< round trips, ns
    precision_info precision;
    double measured_s = 0;          ///< wall time of the measured round trips
};

/// Runs `count` round trips, writing each RTT in ns to out[0..count) (out may be null for
/// warm-up); returns 0 or a failure code (ECANCELED when stopped early). Called once per batch, never per message.
using round_trip_batch = std::function<int(std::size_t count, double* out)>;

/// Most of a time cap one batch of round trips may take, at the time per round trip
/// measured so far: a point's cap holds within one batch, far less than the cap itself.
inline constexpr double max_batch_share = 0.125;

/// A batch may always take this long (round trips of a few µs keep batches of hundreds,
/// whatever the cap): the most a point overshoots its cap besides one round trip.
inline constexpr double min_batch_s = 0.001;

/// Runs one latency point over any transport's ping side. An adaptive or fixed-duration
/// point sizes its batches from the time per round trip (measured in the warm-up, then per
/// batch): none starts unless a round trip fits before the cap, so the point's measured
/// time stays within one round trip (or min_batch_s) of the cap (at least one round trip
/// is measured), and the warm-up within one round trip of warmup_s (plus a tenth of the
/// cap for its first handful). `samples` is reused between points and grows to at most
/// max_exact_samples. `cancel` ends the point early (between batches).
latency_outcome run_latency(const round_trip_batch& batch, const run_spec& spec, std::vector<double>& samples,
                            const std::atomic<bool>& cancel);


}  // namespace meshperf::core
