#include "gpu/pattern.hpp"

#include <bit>
#include <cstring>

namespace meshperf::gpu {

static_assert(std::endian::native == std::endian::little, "the pattern is defined little-endian, like the GPU");

void fill_pattern_host(void* dst, std::size_t bytes, std::uint64_t seed) noexcept {
    auto* p = static_cast<unsigned char*>(dst);
    const std::size_t words = bytes / 8;
    for (std::size_t w = 0; w < words; ++w) {
        const std::uint64_t v = pattern_word(seed, w);
        std::memcpy(p + 8 * w, &v, 8);
    }
    for (std::size_t i = words * 8; i < bytes; ++i) p[i] = pattern_byte(seed, i);
}

std::uint64_t count_pattern_mismatches_host(const void* src, std::size_t bytes, std::uint64_t seed) noexcept {
    const auto* p = static_cast<const unsigned char*>(src);
    const std::size_t words = bytes / 8;
    std::uint64_t bad = 0;
    for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t v;
        std::memcpy(&v, p + 8 * w, 8);
        const std::uint64_t x = v ^ pattern_word(seed, w);
        if (x == 0) continue;
        for (int b = 0; b < 8; ++b) bad += ((x >> (8 * b)) & 0xff) != 0;
    }
    for (std::size_t i = words * 8; i < bytes; ++i) bad += p[i] != pattern_byte(seed, i);
    return bad;
}

}  // namespace meshperf::gpu
