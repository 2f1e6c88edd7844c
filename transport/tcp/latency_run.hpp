#pragma once
/// The ping side's whole latency point: warm-up, then round trips in batches until the
/// precision target, the time cap, the fixed count or the fixed duration is reached.
/// Statistics are computed between batches, never per round trip.
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "transport/tcp/stream_loops.hpp"

#include <atomic>
#include <string>
#include <vector>

namespace meshperf::transport::tcp {

/// Most round-trip samples kept exactly; beyond it every sample goes into a log-linear
/// histogram (percentiles within 1%).
inline constexpr std::size_t max_exact_samples = 1u << 20;

struct latency_outcome {
    int code = loop_ok;             ///< loop_ok or the failure code of the loop
    core::summary rtt_ns;           ///< round trips, ns
    core::precision_info precision;
    double measured_s = 0;          ///< wall time of the measured round trips
};

/// Runs one latency point on a connected pinger. `samples` is reused between points and
/// grows to at most max_exact_samples. `cancel` ends the point early (between batches).
latency_outcome run_latency(pinger& p, const core::run_spec& spec, std::vector<double>& samples,
                            const std::atomic<bool>& cancel);

}  // namespace meshperf::transport::tcp
