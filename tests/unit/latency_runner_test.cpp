// core::run_latency on synthetic round trips: the precision it reports must include the
// variation between blocks of consecutive samples, and an adaptive point must not declare
// its target met from one or two blocks.
#include "core/latency_runner.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace latency_runner_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

/// A fake transport: the round trip of sample i is state_ns(i / 500) plus a few ns of jitter
/// (the runner asks for batches of 500).
struct fake_path {
    std::function<double(std::size_t batch)> state_ns;
    std::mt19937 rng{11};
    std::size_t next = 0;  // measured samples handed out so far

    round_trip_batch batch() {
        return [this](std::size_t count, double* out) {
            if (!out) return 0;  // warm-up
            std::uniform_real_distribution<double> jitter(-5.0, 5.0);
            for (std::size_t i = 0; i < count; ++i, ++next) out[i] = state_ns(next / 500) + jitter(rng);
            return 0;
        };
    }
};

run_spec fixed(std::uint64_t round_trips) {
    run_spec s;
    s.iterations = round_trips;
    s.warmup_s = 0;
    return s;
}

latency_outcome run(fake_path& path, const run_spec& spec) {
    std::vector<double> samples;
    std::atomic<bool> cancel{false};
    return run_latency(path.batch(), spec, samples, cancel);
}

}  // namespace

TEST_SUITE("latency_runner") {

TEST_CASE("two-state mixture: blocks at 7 and 30 us with steady samples inside report a wide interval") {
    // Stretches of 4 batches (2000 round trips) in one state, 5 of 8 stretches at 7 µs: the
    // median lies inside the 7 µs cluster, so the within-sample interval alone is ±0.1%.
    fake_path path;
    path.state_ns = [](std::size_t b) {
        static constexpr bool slow[] = {false, false, true, false, true, false, false, true};
        return slow[(b / 4) % 8] ? 30000.0 : 7000.0;
    };
    const auto out = run(path, fixed(64 * 500));
    REQUIRE(out.code == 0);
    CHECK(out.rtt_ns.p50 == doctest::Approx(7000).epsilon(0.01));
    REQUIRE(out.precision.method.has_value());
    CHECK(*out.precision.method == precision_method::blocks);
    CHECK(out.precision.samples_achieved < 0.005);
    CHECK(out.precision.achieved > 0.3);  // the 7 ↔ 30 µs swings, not ±0.1%
    CHECK(out.precision.achieved == out.precision.blocks_achieved);
    CHECK(out.precision.blocks >= min_blocks_for_target);
    CHECK(out.precision.block_values.size() == out.precision.blocks);
}

TEST_CASE("two-state mixture: blocks alternating 7 and 30 us in equal shares report a wide interval") {
    // With equal shares the median falls in the gap and the within-sample interval already
    // spans it; the unequal mixture above is the case the between-block interval adds.
    fake_path path;
    path.state_ns = [](std::size_t b) { return (b / 2) % 2 ? 30000.0 : 7000.0; };
    const auto out = run(path, fixed(64 * 500));
    REQUIRE(out.code == 0);
    CHECK(out.precision.achieved > 0.3);
}

TEST_CASE("steady round trips report the narrow within-sample interval") {
    fake_path path;
    path.state_ns = [](std::size_t) { return 14000.0; };
    const auto out = run(path, fixed(64 * 500));
    REQUIRE(out.code == 0);
    REQUIRE(out.precision.method.has_value());
    CHECK(*out.precision.method == precision_method::samples);
    CHECK(out.precision.achieved < 0.001);
    CHECK(out.precision.achieved == out.precision.samples_achieved);
    CHECK(out.precision.blocks == 32);  // 64 batches: 32 blocks of 2
    for (double v : out.precision.block_values) CHECK(v == doctest::Approx(14000).epsilon(0.001));
}

TEST_CASE("one batch: too few blocks, said so") {
    fake_path path;
    path.state_ns = [](std::size_t) { return 14000.0; };
    const auto out = run(path, fixed(500));
    REQUIRE(out.code == 0);
    REQUIRE(out.precision.method.has_value());
    CHECK(*out.precision.method == precision_method::too_few_blocks);
    CHECK(out.precision.blocks == 1);
    CHECK(std::isinf(out.precision.blocks_achieved));
}

TEST_CASE("adaptive: the target is not declared met from one block") {
    fake_path path;
    path.state_ns = [](std::size_t) { return 14000.0; };
    run_spec spec;
    spec.warmup_s = 0;
    spec.max_point_s = 0;  // the cap ends the point after its first batch
    spec.precision = 0.01;
    const auto out = run(path, spec);
    REQUIRE(out.code == 0);
    CHECK(out.precision.batches == 1);
    CHECK(out.precision.samples_achieved < 0.01);  // the samples alone would pass
    CHECK_FALSE(out.precision.met);
}

TEST_CASE("adaptive: a steady path stops once enough blocks agree, not at the first check") {
    fake_path path;
    path.state_ns = [](std::size_t) { return 14000.0; };
    run_spec spec;
    spec.warmup_s = 0;
    spec.max_point_s = 30;  // far beyond what a steady fake path needs
    spec.precision = 0.01;
    const auto out = run(path, spec);
    REQUIRE(out.code == 0);
    CHECK(out.precision.met);
    CHECK(out.precision.blocks >= min_blocks_for_target);
    CHECK(out.precision.batches >= min_blocks_for_target);
    CHECK(out.precision.batches <= 16);  // checks at 2, 4, 8 batches: it stops at the first that has enough
}

TEST_CASE("adaptive: a path that keeps switching state runs to its cap and misses the target") {
    // The state holds for stretches that double in length (batches 1-2 slow, 3-6 fast, 7-14
    // slow, ...), so at every check, however fast the fake runs, the latest stretch fills a
    // large share of the blocks and they disagree.
    fake_path path;
    path.state_ns = [](std::size_t b) { return std::bit_width(b + 1) % 2 == 0 ? 30000.0 : 7000.0; };
    run_spec spec;
    spec.warmup_s = 0;
    spec.max_point_s = 0.2;
    spec.precision = 0.01;
    const auto out = run(path, spec);
    REQUIRE(out.code == 0);
    CHECK_FALSE(out.precision.met);
    REQUIRE(out.precision.method.has_value());
    CHECK(*out.precision.method == precision_method::blocks);
    CHECK(out.precision.achieved > 0.1);
}

}  // TEST_SUITE

}  // namespace latency_runner_test
