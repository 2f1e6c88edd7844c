#pragma once
/// The byte pattern --verify checks: both sides generate it from the same seed.
#include <cstddef>
#include <cstdint>
#include <span>

namespace meshperf::transport::rdma {

/// Fills out with the pattern of seed: a pseudo-random byte stream (xorshift64*), so a
/// shifted, truncated or stale copy does not match.
void fill_pattern(std::span<std::byte> out, std::uint32_t seed) noexcept;

}  // namespace meshperf::transport::rdma
