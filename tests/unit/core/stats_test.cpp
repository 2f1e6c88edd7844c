#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <doctest/doctest.h>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace stats_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Approx;

namespace {

std::vector<double> one_to(std::size_t n) {
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), 1.0);
    return v;
}

/// Exact probability that Binomial(n, 1/2) lies in [a, b], by summing log-space terms.
double binomial_half_between(std::size_t n, std::size_t a, std::size_t b) {
    double p = 0;
    for (std::size_t k = a; k <= b && k <= n; ++k)
        p += std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) - static_cast<double>(n) * std::log(2.0));
    return p;
}

}  // namespace

TEST_SUITE("stats") {

TEST_CASE("percentile_sorted: numpy 'linear' on 1..10") {
    const auto v = one_to(10);
    // numpy.percentile(range(1, 11), q, method="linear"): position q * (n - 1), interpolated.
    CHECK(percentile_sorted(v, 0.0) == 1.0);
    CHECK(percentile_sorted(v, 1.0) == 10.0);
    CHECK(percentile_sorted(v, 0.5) == Approx(5.5));     // pos 4.5
    CHECK(percentile_sorted(v, 0.25) == Approx(3.25));   // pos 2.25
    CHECK(percentile_sorted(v, 0.9) == Approx(9.1));     // pos 8.1
    CHECK(percentile_sorted(v, 0.99) == Approx(9.91));   // pos 8.91
    CHECK(percentile_sorted(v, 0.999) == Approx(9.991)); // pos 8.991
}

TEST_CASE("percentile_sorted: uneven spacing, single value, clamping") {
    const std::vector<double> v{15, 20, 35, 40, 50};
    CHECK(percentile_sorted(v, 0.10) == Approx(17.0));  // pos 0.4: 15 + 0.4 * 5
    CHECK(percentile_sorted(v, 0.25) == Approx(20.0));  // pos 1
    CHECK(percentile_sorted(v, 0.40) == Approx(29.0));  // pos 1.6: 20 + 0.6 * 15
    CHECK(percentile_sorted(v, 0.50) == Approx(35.0));  // pos 2
    CHECK(percentile_sorted(v, 0.75) == Approx(40.0));  // pos 3
    CHECK(percentile_sorted(v, 0.95) == Approx(48.0));  // pos 3.8: 40 + 0.8 * 10

    const std::vector<double> one{7.5};
    for (double q : {0.0, 0.5, 0.999, 1.0}) CHECK(percentile_sorted(one, q) == 7.5);

    CHECK(percentile_sorted(v, -0.5) == 15.0);
    CHECK(percentile_sorted(v, 1.5) == 50.0);

    const std::vector<double> two{10, 20};
    CHECK(percentile_sorted(two, 0.5) == Approx(15.0));
    CHECK(percentile_sorted(two, 0.99) == Approx(19.9));
}

TEST_CASE("summarize: 1..100 shuffled") {
    auto v = one_to(100);
    std::mt19937 rng(42);
    std::shuffle(v.begin(), v.end(), rng);
    const auto s = summarize(v);
    CHECK(std::is_sorted(v.begin(), v.end()));  // sorted in place
    CHECK(s.count == 100);
    CHECK(s.min == 1.0);
    CHECK(s.max == 100.0);
    CHECK(s.mean == Approx(50.5));
    // Sample stdev of 1..n: sqrt(n (n + 1) / 12) = sqrt(841.666...)
    CHECK(s.stdev == Approx(29.011491975882016));
    CHECK(s.p50 == Approx(50.5));    // pos 49.5
    CHECK(s.p90 == Approx(90.1));    // pos 89.1
    CHECK(s.p99 == Approx(99.01));   // pos 98.01
    CHECK(s.p999 == Approx(99.901)); // pos 98.901
}

TEST_CASE("summarize: small and degenerate sets") {
    std::vector<double> one{3.0};
    const auto a = summarize(one);
    CHECK(a.count == 1);
    CHECK(a.min == 3.0);
    CHECK(a.max == 3.0);
    CHECK(a.p50 == 3.0);
    CHECK(a.p999 == 3.0);
    CHECK(a.mean == 3.0);
    CHECK(a.stdev == 0.0);

    std::vector<double> same(1000, 42.0);
    const auto b = summarize(same);
    CHECK(b.mean == 42.0);
    CHECK(b.stdev == 0.0);
    CHECK(b.p99 == 42.0);

    std::vector<double> pair{2.0, 4.0};
    const auto c = summarize(pair);
    CHECK(c.mean == 3.0);
    CHECK(c.stdev == Approx(std::sqrt(2.0)));

    // Large values with a small spread: the mean is not lost to rounding.
    std::vector<double> big{1e12 + 1, 1e12 + 2, 1e12 + 3};
    const auto d = summarize(big);
    CHECK(d.mean == 1e12 + 2);
    CHECK(d.stdev == Approx(1.0));
}

TEST_CASE("median_ci_half_width_sorted: Conover's ranks on 1..n") {
    // 1-based ranks l = floor(n/2 - 0.98 sqrt n) and u = ceil(1 + n/2 + 0.98 sqrt n), clamped
    // to 1..n. On 1..n the value at 1-based rank r is r, so the half-width is (u - l) / 2.
    CHECK(std::isinf(median_ci_half_width_sorted(one_to(1))));
    CHECK(std::isinf(median_ci_half_width_sorted(one_to(5))));
    // n = 6: 0.98 * 2.449 = 2.400; l = floor(0.600) = 0 -> 1, u = ceil(6.400) = 7 -> 6.
    CHECK(median_ci_half_width_sorted(one_to(6)) == Approx(2.5));
    // n = 10: 3.099; l = floor(1.901) = 1, u = ceil(9.099) = 10.
    CHECK(median_ci_half_width_sorted(one_to(10)) == Approx(4.5));
    // n = 50: 6.930; l = floor(18.070) = 18, u = ceil(32.930) = 33.
    CHECK(median_ci_half_width_sorted(one_to(50)) == Approx(7.5));
    // n = 100: 9.800; l = floor(40.200) = 40, u = ceil(60.800) = 61.
    CHECK(median_ci_half_width_sorted(one_to(100)) == Approx(10.5));
    // n = 1000: 30.990; l = floor(469.010) = 469, u = ceil(531.990) = 532.
    CHECK(median_ci_half_width_sorted(one_to(1000)) == Approx(31.5));
    // Constant data: no spread.
    CHECK(median_ci_half_width_sorted(std::vector<double>(50, 7.0)) == 0.0);
    // Scales with the data.
    auto v = one_to(100);
    for (auto& x : v) x *= 10;
    CHECK(median_ci_half_width_sorted(v) == Approx(105.0));
    // Only the order statistics matter: a wild outlier does not widen the interval.
    v = one_to(100);
    v.back() = 1e12;
    CHECK(median_ci_half_width_sorted(v) == Approx(10.5));
}

// Was a bug (fixed): the interval is one order statistic too narrow on each side for a 95% interval:
// [x(lo), x(hi)] covers the median with probability P(lo + 1 <= B <= hi), B ~ Bin(n, 1/2),
// which is 93.5% at n = 50, 94.3% at n = 100 and 94.6% at n = 1000. The usual choice
// (Conover; lower rank floor(n/2 - 0.98 sqrt n), upper ceil(1 + n/2 + 0.98 sqrt n), 1-based)
// keeps coverage >= 95%. Adaptive latency points therefore stop slightly early.
TEST_CASE("median_ci_half_width_sorted: the interval covers the median with >= 95%") {
    for (std::size_t n : {50u, 100u, 200u, 1000u}) {
        CAPTURE(n);
        const double hw = median_ci_half_width_sorted(one_to(n));
        // Narrowest symmetric [x(k), x(n-1-k)] (0-based) with coverage >= 95%.
        std::size_t k = n / 2;
        while (k > 0 && binomial_half_between(n, k + 1, n - 1 - k) < 0.95) --k;
        const double needed = static_cast<double>((n - 1 - k) - k) / 2.0;
        CHECK(hw >= needed);
    }
}

TEST_CASE("t_quantile_95: table values and the large-dof approximation") {
    CHECK(std::isinf(t_quantile_95(0)));
    CHECK(t_quantile_95(1) == Approx(12.706));
    CHECK(t_quantile_95(2) == Approx(4.303));
    CHECK(t_quantile_95(10) == Approx(2.228));
    CHECK(t_quantile_95(30) == Approx(2.042));
    // Exact Student t 0.975 quantiles (scipy.stats.t.ppf) within 0.2%.
    CHECK(t_quantile_95(31) == Approx(2.0395).epsilon(0.002));
    CHECK(t_quantile_95(40) == Approx(2.0211).epsilon(0.002));
    CHECK(t_quantile_95(60) == Approx(2.0003).epsilon(0.002));
    CHECK(t_quantile_95(120) == Approx(1.9799).epsilon(0.002));
    CHECK(t_quantile_95(1000) == Approx(1.9623).epsilon(0.002));
    CHECK(t_quantile_95(1'000'000) == Approx(1.959964).epsilon(1e-5));
    // Decreasing in the degrees of freedom and never below the normal quantile.
    for (std::size_t dof = 2; dof < 2000; ++dof) {
        CAPTURE(dof);
        CHECK(t_quantile_95(dof) <= t_quantile_95(dof - 1));
        CHECK(t_quantile_95(dof) > 1.959);
    }
}

TEST_CASE("mean_ci_half_width: Student t on known data") {
    CHECK(std::isinf(mean_ci_half_width(std::vector<double>{})));
    CHECK(std::isinf(mean_ci_half_width(std::vector<double>{5.0})));
    // n = 2: {1, 3}: sd = sqrt(2); t(1) * sd / sqrt(2) = 12.706.
    CHECK(mean_ci_half_width(std::vector<double>{1.0, 3.0}) == Approx(12.706));
    // n = 31: 1..31: sd / sqrt(n) = sqrt((n + 1) / 12) = 1.6329932; t(30) = 2.042.
    CHECK(mean_ci_half_width(one_to(31)) == Approx(2.042 * std::sqrt(32.0 / 12.0)));
    CHECK(mean_ci_half_width(one_to(31)) == Approx(3.334572).epsilon(1e-6));
    // n = 10001: 1..10001: sd / sqrt(n) = sqrt(10002 / 12) = 28.870400; t(10000) ~ 1.96020.
    CHECK(mean_ci_half_width(one_to(10001)) == Approx(1.96020 * std::sqrt(10002.0 / 12.0)).epsilon(1e-4));
    // Constant values: zero width.
    CHECK(mean_ci_half_width(std::vector<double>(20, 3.0)) == 0.0);
}

TEST_CASE("mean: empty and known") {
    CHECK(mean(std::vector<double>{}) == 0.0);
    CHECK(mean(one_to(100)) == Approx(50.5));
    CHECK(mean(std::vector<double>{-1.0, 1.0}) == 0.0);
}

TEST_CASE("log_histogram: values below 128 are exact") {
    log_histogram h;
    CHECK(h.count() == 0);
    const auto empty = h.summarize();
    CHECK(empty.count == 0);
    for (std::uint64_t v = 0; v < 128; ++v) h.add(v);
    CHECK(h.count() == 128);
    CHECK(h.min() == 0.0);
    CHECK(h.max() == 127.0);
    // The value at rank floor(q (n - 1)) exactly.
    CHECK(h.quantile(0.0) == 0.0);
    CHECK(h.quantile(0.5) == 63.0);   // floor(63.5)
    CHECK(h.quantile(0.9) == 114.0);  // floor(114.3)
    CHECK(h.quantile(0.99) == 125.0); // floor(125.73)
    CHECK(h.quantile(1.0) == 127.0);
    CHECK(h.mean() == Approx(63.5));
    CHECK(h.stdev() == Approx(std::sqrt(128.0 * 129.0 / 12.0)));

    log_histogram g;
    for (int i = 0; i < 10; ++i) g.add(5);
    g.add(100);
    CHECK(g.quantile(0.5) == 5.0);
    CHECK(g.quantile(0.9) == 5.0);
    CHECK(g.quantile(1.0) == 100.0);
}

TEST_CASE("log_histogram: a single large value comes back exactly (clamped to min and max)") {
    log_histogram h;
    h.add(1'234'567);
    CHECK(h.quantile(0.0) == 1'234'567.0);
    CHECK(h.quantile(0.5) == 1'234'567.0);
    CHECK(h.quantile(1.0) == 1'234'567.0);
    CHECK(h.stdev() == 0.0);
    const auto s = h.summarize();
    CHECK(s.count == 1);
    CHECK(s.min == s.max);
    CHECK(s.mean == 1'234'567.0);
}

TEST_CASE("log_histogram: extreme values stay in bounds") {
    log_histogram h;
    h.add(0);
    h.add(std::numeric_limits<std::uint64_t>::max());
    h.add(std::uint64_t{1} << 63);
    h.add((std::uint64_t{1} << 63) - 1);
    CHECK(h.count() == 4);
    CHECK(h.max() == static_cast<double>(std::numeric_limits<std::uint64_t>::max()));
    CHECK(h.quantile(1.0) <= h.max());
    CHECK(h.quantile(1.0) == Approx(h.max()).epsilon(0.004));  // the top bucket's midpoint
    CHECK(h.quantile(0.0) == 0.0);
    const double mid = h.quantile(0.5);
    CHECK(mid == Approx(9.223372036854775808e18).epsilon(0.01));
}

TEST_CASE("log_histogram: quantiles within 1% on a large log-normal sample; mean and stdev exact") {
    std::mt19937_64 rng(20240601);
    std::lognormal_distribution<double> dist(std::log(20'000.0), 0.6);  // ~20 us latencies in ns, long tail
    std::vector<double> exact;
    log_histogram h;
    constexpr std::size_t n = 200'000;
    exact.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::uint64_t>(dist(rng)) + 1;
        h.add(v);
        exact.push_back(static_cast<double>(v));
    }
    std::vector<double> sorted = exact;
    std::sort(sorted.begin(), sorted.end());
    const auto s = summarize(exact);
    const auto hs = h.summarize();

    CHECK(hs.count == n);
    CHECK(hs.min == s.min);
    CHECK(hs.max == s.max);
    CHECK(hs.mean == Approx(s.mean).epsilon(1e-12));
    CHECK(hs.stdev == Approx(s.stdev).epsilon(1e-9));
    for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
        CAPTURE(q);
        const double truth = percentile_sorted(sorted, q);
        const double at_rank = sorted[static_cast<std::size_t>(std::floor(q * static_cast<double>(n - 1)))];
        const double got = h.quantile(q);
        CHECK(std::fabs(got - truth) <= 0.01 * truth);
        CHECK(std::fabs(got - at_rank) <= 0.005 * at_rank);  // half a bucket: < 0.4%
    }
    CHECK(std::fabs(hs.p50 - s.p50) <= 0.01 * s.p50);
    CHECK(std::fabs(hs.p90 - s.p90) <= 0.01 * s.p90);
    CHECK(std::fabs(hs.p99 - s.p99) <= 0.01 * s.p99);
    CHECK(std::fabs(hs.p999 - s.p999) <= 0.01 * s.p999);
}

TEST_CASE("log_histogram: every value maps into a bucket whose midpoint is within 0.4%") {
    // One value per histogram: the quantile is clamped, so use two values to see the bucket.
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        const int bits = 8 + static_cast<int>(rng() % 55);  // 2^7 .. 2^62
        const std::uint64_t v = (rng() >> (64 - bits)) | (std::uint64_t{1} << (bits - 1));
        log_histogram h;
        h.add(v);
        h.add(v);
        h.add(0);
        h.add(std::numeric_limits<std::uint64_t>::max());
        // Ranks 0..3: floor(0.5 * 3) = 1 -> the bucket of v.
        const double mid = h.quantile(0.5);
        CAPTURE(v);
        CHECK(std::fabs(mid - static_cast<double>(v)) <= 0.004 * static_cast<double>(v));
    }
}

}  // TEST_SUITE

TEST_SUITE("stats: between-block interval") {

TEST_CASE("block_means: one batch per block until max_blocks, then pairs merge") {
    block_means b;
    for (int i = 1; i <= 5; ++i) b.add(i);
    CHECK(b.batches() == 5);
    CHECK(b.batches_per_block() == 1);
    CHECK(b.means() == std::vector<double>{1, 2, 3, 4, 5});
    block_means full;
    for (std::size_t i = 0; i < max_blocks; ++i) full.add(static_cast<double>(i));
    CHECK(full.batches_per_block() == 1);
    CHECK(full.means().size() == max_blocks);
    // one more: 16 blocks of two batches (means 0.5, 2.5, ..., 30.5), and the new batch is
    // half of the 17th block, which counts
    full.add(1000.0);
    CHECK(full.batches_per_block() == 2);
    const auto m = full.means();
    REQUIRE(m.size() == max_blocks / 2 + 1);
    CHECK(m.front() == Approx(0.5));
    CHECK(m[max_blocks / 2 - 1] == Approx(30.5));
    CHECK(m.back() == Approx(1000.0));
}

TEST_CASE("block_means: any length ends with at most max_blocks blocks; a short partial block is left out") {
    for (std::size_t n : {1u, 31u, 32u, 33u, 64u, 100u, 1000u, 12345u}) {
        block_means b;
        for (std::size_t i = 0; i < n; ++i) b.add(1.0);
        const auto m = b.means();
        CHECK(m.size() <= max_blocks);
        CHECK(m.size() >= std::min<std::size_t>(n, max_blocks / 2));
        for (double v : m) CHECK(v == Approx(1.0));
    }
    block_means b;
    for (int i = 0; i < 64 + 1; ++i) b.add(1.0);  // 32 blocks of 2, and one batch that is left out (32 are complete)
    CHECK(b.batches_per_block() == 2);
    CHECK(b.means().size() == 32);
    b.add(100.0);  // a 33rd block completes: 16 blocks of 4, and these two batches are half of the 17th, kept
    CHECK(b.batches_per_block() == 4);
    CHECK(b.means().size() == 17);
    CHECK(b.means().back() == Approx(50.5));
}

TEST_CASE("choose_interval: blocks that agree keep the within-sample interval") {
    std::mt19937 rng(3);
    std::normal_distribution<double> noise(1000.0, 1.0);
    std::vector<double> blocks(20);
    for (auto& v : blocks) v = noise(rng);
    const double samples_rel = 0.001;  // at least as wide as the blocks' spread (~0.05%)
    const auto c = choose_interval(samples_rel, blocks, 1000.0);
    CHECK(c.method == precision_method::samples);
    CHECK(c.relative_half_width == samples_rel);
    CHECK(c.blocks == 20);
    CHECK(c.blocks_relative_half_width < samples_rel);
    CHECK(target_met(c, 0.01));
}

TEST_CASE("choose_interval: blocks at two levels report the wide between-block interval") {
    // Blocks at 7 µs and 30 µs with a narrow within-sample interval (each block is steady).
    std::vector<double> blocks;
    for (int i = 0; i < 16; ++i) blocks.push_back(i % 3 == 2 ? 30000.0 : 7000.0);
    const auto c = choose_interval(0.001, blocks, 7000.0);
    CHECK(c.method == precision_method::blocks);
    CHECK(c.relative_half_width == c.blocks_relative_half_width);
    CHECK(c.relative_half_width == Approx(mean_ci_half_width(blocks) / 7000.0));
    CHECK(c.relative_half_width > 0.3);
    CHECK(c.samples_relative_half_width == 0.001);
    CHECK_FALSE(target_met(c, 0.01));
}

TEST_CASE("choose_interval: fewer than three blocks cannot be assessed, and never meet a target") {
    const std::vector<double> two{1000.0, 1000.5};
    const auto c = choose_interval(0.001, two, 1000.0);
    CHECK(c.method == precision_method::too_few_blocks);
    CHECK(c.relative_half_width == 0.001);
    CHECK(std::isinf(c.blocks_relative_half_width));
    CHECK_FALSE(target_met(c, 0.01));
    // even with assessable blocks the target needs min_blocks_for_target of them
    const std::vector<double> few(min_blocks_for_target - 1, 1000.0);
    const auto f = choose_interval(0.001, few, 1000.0);
    CHECK(f.method == precision_method::samples);
    CHECK_FALSE(target_met(f, 0.01));
    const std::vector<double> enough(min_blocks_for_target, 1000.0);
    CHECK(target_met(choose_interval(0.001, enough, 1000.0), 0.01));
}

TEST_CASE("choose_interval: no within-sample interval falls back to the blocks") {
    const std::vector<double> blocks{10.0, 11.0, 10.5, 10.2};
    const auto c = choose_interval(std::numeric_limits<double>::infinity(), blocks, 10.4);
    CHECK(c.method == precision_method::blocks);
    CHECK(std::isfinite(c.relative_half_width));
}

TEST_CASE("precision_method names round-trip") {
    for (auto m : {precision_method::samples, precision_method::blocks, precision_method::too_few_blocks})
        CHECK(parse_precision_method(to_string(m)) == m);
    CHECK_FALSE(parse_precision_method("bogus").has_value());
}

}  // TEST_SUITE

}  // namespace stats_test
