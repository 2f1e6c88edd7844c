// The only device code of meshperf: the --verify fill and check kernels and the collectives'
// sum. Kept small and free of Asio, nlohmann and fmt, which would slow nvcc down.
#include "gpu/detail/kernels.hpp"
#include "gpu/pattern.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace meshperf::gpu::detail {
namespace {

constexpr int threads = 256;

int blocks_for(std::size_t words) {
    // Grid-stride loops: enough blocks to fill any current GPU, no more.
    const std::size_t b = (words + threads - 1) / threads;
    return static_cast<int>(b < 4096 ? (b == 0 ? 1 : b) : 4096);
}

__global__ void fill_kernel(std::uint64_t* dst, std::size_t bytes, std::uint64_t seed) {
    const std::size_t words = bytes / 8;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t w = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride)
        dst[w] = pattern_word(seed, w);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        auto* tail = reinterpret_cast<unsigned char*>(dst);
        for (std::size_t i = words * 8; i < bytes; ++i) tail[i] = pattern_byte(seed, i);
    }
}

__global__ void count_kernel(const std::uint64_t* src, std::size_t bytes, std::uint64_t seed,
                             unsigned long long* mismatches) {
    const std::size_t words = bytes / 8;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long bad = 0;
    for (std::size_t w = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride) {
        const std::uint64_t x = src[w] ^ pattern_word(seed, w);
        if (x != 0)
            for (int b = 0; b < 8; ++b) bad += ((x >> (8 * b)) & 0xff) != 0;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const auto* tail = reinterpret_cast<const unsigned char*>(src);
        for (std::size_t i = words * 8; i < bytes; ++i) bad += tail[i] != pattern_byte(seed, i);
    }
    if (bad != 0) atomicAdd(mismatches, bad);
}

// acc[i] += in[i], the sum in float rounded once to nearest even for bf16 and fp16, as
// core::reduce_sum does on the host.
__global__ void sum_fp32_kernel(float* acc, const float* in, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) acc[i] += in[i];
}

__global__ void sum_bf16_kernel(__nv_bfloat16* acc, const __nv_bfloat16* in, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        acc[i] = __float2bfloat16_rn(__bfloat162float(acc[i]) + __bfloat162float(in[i]));
}

__global__ void sum_fp16_kernel(__half* acc, const __half* in, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        acc[i] = __float2half_rn(__half2float(acc[i]) + __half2float(in[i]));
}

}  // namespace

int launch_sum(int element, void* acc, const void* in, std::size_t elements, void* stream) noexcept {
    const auto s = static_cast<cudaStream_t>(stream);
    switch (element) {
    case sum_fp32:
        sum_fp32_kernel<<<blocks_for(elements), threads, 0, s>>>(static_cast<float*>(acc), static_cast<const float*>(in), elements);
        break;
    case sum_bf16:
        sum_bf16_kernel<<<blocks_for(elements), threads, 0, s>>>(static_cast<__nv_bfloat16*>(acc),
                                                                 static_cast<const __nv_bfloat16*>(in), elements);
        break;
    case sum_fp16:
        sum_fp16_kernel<<<blocks_for(elements), threads, 0, s>>>(static_cast<__half*>(acc), static_cast<const __half*>(in),
                                                                 elements);
        break;
    default:
        return static_cast<int>(cudaErrorInvalidValue);
    }
    return static_cast<int>(cudaGetLastError());
}

int launch_fill_pattern(void* dst, std::size_t bytes, std::uint64_t seed, void* stream) noexcept {
    fill_kernel<<<blocks_for(bytes / 8), threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<std::uint64_t*>(dst), bytes, seed);
    return static_cast<int>(cudaGetLastError());
}

int launch_count_mismatches(const void* src, std::size_t bytes, std::uint64_t seed, unsigned long long* mismatches,
                            void* stream) noexcept {
    count_kernel<<<blocks_for(bytes / 8), threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const std::uint64_t*>(src), bytes, seed, mismatches);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace meshperf::gpu::detail
