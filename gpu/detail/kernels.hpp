#pragma once
/// Private to gpu/: launchers of the kernels in kernels.cu. Plain C++ declarations, so the
/// host code that calls them is compiled by the host compiler; streams travel as void*
/// (a cudaStream_t). Each returns the cudaError_t of the launch (0 on success).
#include <cstddef>
#include <cstdint>

namespace meshperf::gpu::detail {

/// Element types of launch_sum (plain ints: this header stays free of core/).
inline constexpr int sum_fp32 = 0, sum_bf16 = 1, sum_fp16 = 2;
/// Enqueues acc[i] += in[i] for `elements` elements of type `element` (sum_*), on device
/// memory; bf16 and fp16 summed in float and rounded once to nearest even.
int launch_sum(int element, void* acc, const void* in, std::size_t elements, void* stream) noexcept;

/// Enqueues a fill of bytes of device memory at dst (8-byte aligned) with the pattern.
int launch_fill_pattern(void* dst, std::size_t bytes, std::uint64_t seed, void* stream) noexcept;

/// Enqueues a count of the bytes of device memory at src (8-byte aligned) that differ from
/// the pattern, added to *mismatches (device memory the caller zeroed).
int launch_count_mismatches(const void* src, std::size_t bytes, std::uint64_t seed,
                            unsigned long long* mismatches, void* stream) noexcept;

}  // namespace meshperf::gpu::detail
