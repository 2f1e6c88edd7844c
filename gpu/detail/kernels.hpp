#pragma once
/// Private to gpu/: launchers of the kernels in kernels.cu. Plain C++ declarations, so the
/// host code that calls them is compiled by the host compiler; streams travel as void*
/// (a cudaStream_t). Each returns the cudaError_t of the launch (0 on success).
#include <cstddef>
#include <cstdint>

namespace meshperf::gpu::detail {

/// Enqueues a fill of bytes of device memory at dst (8-byte aligned) with the pattern.
int launch_fill_pattern(void* dst, std::size_t bytes, std::uint64_t seed, void* stream) noexcept;

/// Enqueues a count of the bytes of device memory at src (8-byte aligned) that differ from
/// the pattern, added to *mismatches (device memory the caller zeroed).
int launch_count_mismatches(const void* src, std::size_t bytes, std::uint64_t seed,
                            unsigned long long* mismatches, void* stream) noexcept;

}  // namespace meshperf::gpu::detail
