#include "core/collective/reduce_ops.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace meshperf::core {

std::uint16_t to_bfloat16(float f) noexcept {
    const auto bits = std::bit_cast<std::uint32_t>(f);
    if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // quiet, keeps the sign
    // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit, then truncate.
    const std::uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float from_bfloat16(std::uint16_t h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t to_half(float f) noexcept {
    const auto bits = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
    const std::uint32_t x = bits & 0x7fffffff;
    if (x >= 0x7f800000) return sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00);  // NaN, infinity
    if (x >= 0x477ff000) return sign | 0x7c00;                              // rounds past 65504
    if (x < 0x38800000) {
        // Below the smallest normal half (2^-14): a multiple of 2^-24, rounded to nearest even
        // by the FPU (the scaling by 2^24 is exact).
        const auto m = static_cast<std::uint32_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
        return sign | static_cast<std::uint16_t>(m);
    }
    const std::uint32_t mant = x & 0x7fffff;
    std::uint32_t h = (((x >> 23) - 127 + 15) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right
    return sign | static_cast<std::uint16_t>(h);
}

float from_half(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        const float v = static_cast<float>(mant) / 16777216.0f;  // subnormal: mant × 2^-24
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
    return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

namespace {

// Elements are read and written with memcpy: a received buffer carries no alignment promise.
float load(dtype t, const std::byte* p) noexcept {
    if (t == dtype::fp32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return t == dtype::bf16 ? from_bfloat16(h) : from_half(h);
}

void store(dtype t, std::byte* p, float v) noexcept {
    if (t == dtype::fp32) {
        std::memcpy(p, &v, 4);
        return;
    }
    const std::uint16_t h = t == dtype::bf16 ? to_bfloat16(v) : to_half(v);
    std::memcpy(p, &h, 2);
}

}  // namespace

void reduce_sum(dtype type, std::span<std::byte> acc, std::span<const std::byte> in) noexcept {
    const std::size_t w = dtype_bytes(type);
    const std::size_t n = std::min(acc.size(), in.size()) / w;
    if (type == dtype::fp32) {
        // The common case as a plain loop the compiler vectorises.
        for (std::size_t i = 0; i < n; ++i) {
            float a, b;
            std::memcpy(&a, acc.data() + i * 4, 4);
            std::memcpy(&b, in.data() + i * 4, 4);
            a += b;
            std::memcpy(acc.data() + i * 4, &a, 4);
        }
        return;
    }
    for (std::size_t i = 0; i < n; ++i) store(type, acc.data() + i * w, load(type, acc.data() + i * w) + load(type, in.data() + i * w));
}

float test_value(unsigned rank, std::size_t index) noexcept { return static_cast<float>((rank + index) % 4); }

void fill_test_values(dtype type, unsigned rank, std::span<std::byte> out, std::size_t first) noexcept {
    const std::size_t w = dtype_bytes(type);
    for (std::size_t i = 0; i < out.size() / w; ++i) store(type, out.data() + i * w, test_value(rank, first + i));
}

std::uint64_t count_wrong_sums(dtype type, unsigned ranks, std::span<const std::byte> buffer, std::size_t first) noexcept {
    // Σ_r test_value(r, k) depends on k mod 4 only: four expected sums.
    float want[4] = {0, 0, 0, 0};
    for (unsigned k = 0; k < 4; ++k)
        for (unsigned r = 0; r < ranks; ++r) want[k] += test_value(r, k);
    const std::size_t w = dtype_bytes(type);
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < buffer.size() / w; ++i)
        if (load(type, buffer.data() + i * w) != want[(first + i) % 4]) ++wrong;
    return wrong;
}

float element_value(dtype type, std::span<const std::byte> buffer, std::size_t index) noexcept {
    return load(type, buffer.data() + index * dtype_bytes(type));
}

double sum_tolerance(dtype type, unsigned ranks) noexcept {
    const double u = type == dtype::fp32 ? std::ldexp(1.0, -24) : type == dtype::fp16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
    const double pu = std::max(1u, ranks) * u;
    return pu / (1 - pu);
}

std::uint64_t count_wrong(dtype type, std::span<const std::byte> got, std::span<const double> expected,
                          double relative_tolerance) noexcept {
    const std::size_t n = got.size() / dtype_bytes(type);
    const std::size_t both = std::min(n, expected.size());
    std::uint64_t wrong = std::max(n, expected.size()) - both;
    for (std::size_t i = 0; i < both; ++i) {
        const double g = element_value(type, got, i), e = expected[i];
        // Written so that a NaN on either side fails the comparison and counts.
        if (!(std::fabs(g - e) <= relative_tolerance * std::fabs(e)) && !(g == e)) ++wrong;
    }
    return wrong;
}

}  // namespace meshperf::core
