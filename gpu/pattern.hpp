#pragma once
/// The data pattern for --verify: byte i of a buffer filled with seed s is byte (i mod 8) of
/// splitmix64(s + i / 8), little-endian. The same definition runs on the host and, compiled
/// by nvcc, in the fill and check kernels, so either side can fill and the other check.
/// Plain C++17 (this header is included by the one .cu file).
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MESHPERF_HOST_DEVICE __host__ __device__
#else
#define MESHPERF_HOST_DEVICE
#endif

namespace meshperf::gpu {

/// Pattern word index of a buffer filled with seed.
MESHPERF_HOST_DEVICE inline std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = seed + index * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// Pattern byte at offset i.
MESHPERF_HOST_DEVICE inline unsigned char pattern_byte(std::uint64_t seed, std::uint64_t i) {
    return static_cast<unsigned char>(pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

/// Fills bytes of host memory at dst with the pattern. Any alignment.
void fill_pattern_host(void* dst, std::size_t bytes, std::uint64_t seed) noexcept;

/// Counts the bytes of host memory at src that differ from the pattern. Any alignment.
std::uint64_t count_pattern_mismatches_host(const void* src, std::size_t bytes, std::uint64_t seed) noexcept;

}  // namespace meshperf::gpu
