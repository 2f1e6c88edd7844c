#pragma once
/// A message transport's latency loop as core::run_latency's batch function: the loop fills
/// a span of round-trip times in ns and returns how many it wrote (fewer when its stop flag
/// was set). Header-only, for transport/rdma and transport/ofi.
#include "core/latency_runner.hpp"

#include <cerrno>
#include <cstdint>
#include <span>
#include <vector>

namespace meshperf::transport {

/// Wraps `fill` (std::size_t(std::span<std::uint64_t>)) into batches through `scratch`
/// (512 entries at a time); a batch cut short returns ECANCELED. `scratch` outlives the batch function.
template <class Fill>
core::round_trip_batch round_trip_batches(Fill fill, std::vector<std::uint64_t>& scratch) {
    if (scratch.size() < 512) scratch.resize(512);
    return [fill, &scratch](std::size_t n, double* out) mutable -> int {
        std::size_t done = 0;
        while (done < n) {
            const auto want = std::min(n - done, scratch.size());
            const auto got = fill(std::span(scratch.data(), want));
            if (out)
                for (std::size_t i = 0; i < got; ++i) out[done + i] = static_cast<double>(scratch[i]);
            done += got;
            if (got < want) return ECANCELED;
        }
        return 0;
    };
}

}  // namespace meshperf::transport
