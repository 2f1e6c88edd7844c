// core/collective/reduce_ops: sums per dtype against the rounding rule reduce_ops documents (the sum
// in float, rounded once to nearest even), and #wrong with a tolerance: ring and tree
// all-reduces of non-integer values simulated for p = 2..17 come out within
// sum_tolerance, and one corrupted element counts as exactly one.
#include "core/collective/reduce_ops.hpp"

#include "core/collective/pipelined_schedule.hpp"
#include "tests/unit/schedule_simulator.hpp"

#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <random>
#include <vector>

namespace reduce_ops_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

std::vector<std::byte> one_element(dtype type, float v) {
    std::vector<std::byte> b(dtype_bytes(type));
    if (type == dtype::fp32) std::memcpy(b.data(), &v, 4);
    else {
        const std::uint16_t h = type == dtype::bf16 ? to_bfloat16(v) : to_half(v);
        std::memcpy(b.data(), &h, 2);
    }
    return b;
}

float sum_of(dtype type, float a, float b) {
    auto acc = one_element(type, a);
    reduce_sum(type, acc, one_element(type, b));
    return element_value(type, acc, 0);
}

// Every value exactly representable in bf16 and fp16: 1 + k/128, k = 0..127.
float grid_value(std::mt19937& rng) { return 1.0f + static_cast<float>(rng() % 128) / 128.0f; }

}  // namespace

TEST_CASE("reduce_sum per dtype: float32 adds as IEEE float, bfloat16 and fp16 round the float sum once, to even") {
    CHECK(sum_of(dtype::fp32, 16777216.0f, 1.0f) == 16777216.0f);  // 2^24 + 1: tie, to even
    CHECK(sum_of(dtype::fp32, 16777216.0f, 3.0f) == 16777220.0f);  // tie, to even (upwards)
    CHECK(sum_of(dtype::fp32, 0.1f, 0.2f) == 0.1f + 0.2f);
    CHECK(sum_of(dtype::bf16, 256.0f, 1.0f) == 256.0f);            // 257: tie between 256 and 258, to even
    CHECK(sum_of(dtype::bf16, 256.0f, 3.0f) == 260.0f);            // 259: tie, to even (upwards)
    CHECK(sum_of(dtype::bf16, 1.0f, 0.00390625f) == 1.0f);         // 1 + 2^-8: tie, to even
    CHECK(sum_of(dtype::bf16, 1.0f, 0.01171875f) == 1.015625f);    // 1 + 1.5·2^-7: tie, to 1 + 2^-6
    CHECK(sum_of(dtype::bf16, 3.0f, -3.0f) == 0.0f);
    CHECK(std::isinf(sum_of(dtype::bf16, 3e38f, 3e38f)));           // overflow becomes infinity
    CHECK(std::isnan(sum_of(dtype::bf16, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity())));
    CHECK(sum_of(dtype::fp16, 2048.0f, 1.0f) == 2048.0f);          // tie, to even
    CHECK(sum_of(dtype::fp16, 2048.0f, 3.0f) == 2052.0f);
    // The rule itself, over many pairs of representable values: to_x(float(a) + float(b)).
    std::mt19937 rng(14);
    for (int i = 0; i < 20000; ++i) {
        const auto a = static_cast<std::uint16_t>(rng()), b = static_cast<std::uint16_t>(rng());
        const float fa = from_bfloat16(a), fb = from_bfloat16(b);
        if (std::isnan(fa + fb)) continue;
        CHECK(sum_of(dtype::bf16, fa, fb) == from_bfloat16(to_bfloat16(fa + fb)));
        const float ha = from_half(a), hb = from_half(b);
        if (std::isnan(ha + hb)) continue;
        CHECK(sum_of(dtype::fp16, ha, hb) == from_half(to_half(ha + hb)));
    }
}

TEST_CASE("sum_tolerance: p·u/(1 − p·u) with u the dtype's unit roundoff") {
    CHECK(sum_tolerance(dtype::fp32, 1) == doctest::Approx(std::ldexp(1.0, -24)));
    CHECK(sum_tolerance(dtype::fp16, 2) == doctest::Approx(2 * std::ldexp(1.0, -11)).epsilon(1e-3));
    CHECK(sum_tolerance(dtype::bf16, 16) == doctest::Approx(0.0625 / 0.9375));
    CHECK(sum_tolerance(dtype::bf16, 3) < sum_tolerance(dtype::bf16, 4));
    CHECK(sum_tolerance(dtype::fp32, 17) < sum_tolerance(dtype::fp16, 17));
}

TEST_CASE("count_wrong: exact and tolerant comparisons, NaN, infinities, missing elements") {
    std::vector<std::byte> got;
    for (float v : {1.0f, 2.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        const auto e = one_element(dtype::fp32, v);
        got.insert(got.end(), e.begin(), e.end());
    }
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(count_wrong(dtype::fp32, got, std::vector<double>{1, 2, 3, inf}, 0) == 1);      // the NaN
    CHECK(count_wrong(dtype::fp32, got, std::vector<double>{1, 2.1, 3, 4}, 0) == 3);      // 2 vs 2.1, NaN, inf
    CHECK(count_wrong(dtype::fp32, got, std::vector<double>{1, 2.1, 3, 4}, 0.1) == 2);    // 2 is within 10% of 2.1
    CHECK(count_wrong(dtype::fp32, got, std::vector<double>{1, 2}, 0) == 2);              // two not expected
    CHECK(count_wrong(dtype::fp32, std::span(got).first(4), std::vector<double>{1, 2, 3}, 0) == 2);  // two missing
    CHECK(count_wrong(dtype::fp32, {}, std::vector<double>{}, 0) == 0);
}

TEST_CASE("#wrong of simulated all-reduces of non-integer values: 0 within sum_tolerance, 1 for one corrupted element") {
    for (const auto type : {dtype::fp32, dtype::bf16, dtype::fp16})
        for (unsigned p = 2; p <= 17; ++p)
            for (const bool tree : {false, true}) {
                CAPTURE(p);
                CAPTURE(tree);
                const std::size_t n = 97, w = dtype_bytes(type);
                std::mt19937 rng(p);
                std::vector<schedule_sim::buffer> bufs(p, schedule_sim::buffer(n * w));
                std::vector<double> want(n, 0.0);
                std::vector<rank_schedule> plans;
                for (unsigned r = 0; r < p; ++r) {
                    for (std::size_t i = 0; i < n; ++i) {
                        const auto e = one_element(type, grid_value(rng));
                        std::copy(e.begin(), e.end(), bufs[r].begin() + i * w);
                        want[i] += element_value(type, bufs[r], i);
                    }
                    plans.push_back(tree ? tree_allreduce_steps(p, r, n, 8) : schedule_sim::from_ring(ring_allreduce_steps(p, r), n, p, r));
                }
                schedule_sim::run(type, plans, bufs, bufs);
                std::uint64_t exact_misses = 0;
                for (unsigned r = 0; r < p; ++r) {
                    CHECK(count_wrong(type, bufs[r], want, sum_tolerance(type, p)) == 0);
                    exact_misses += count_wrong(type, bufs[r], want, 0);
                }
                // bf16 sums of p ≥ 3 values in [1, 2) lose bits: exactness is not the test there.
                if (type == dtype::bf16 && p >= 3) CHECK(exact_misses > 0);
                // One element off by a few units in the last place of the expected sum counts as one.
                const auto bad = one_element(type, static_cast<float>(want[5] * (1 + 4 * sum_tolerance(type, p))));
                std::copy(bad.begin(), bad.end(), bufs[p - 1].begin() + 5 * w);
                CHECK(count_wrong(type, bufs[p - 1], want, sum_tolerance(type, p)) == 1);
            }
}

}  // namespace reduce_ops_test
