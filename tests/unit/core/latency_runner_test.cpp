// core::run_latency on synthetic round trips: the precision it reports must include the
// variation between blocks of consecutive samples, and an adaptive point must not declare
// its target met from one or two blocks.
#include "core/latency_runner.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
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

TEST_CASE("past max_exact_samples: every round trip counted once, none of the slots the crossing batch left empty") {
    // 1.2 M round trips of 1 µs: the batch that crosses 2^20 goes to the histogram whole;
    // the slots it did not fill must not be read as round trips of 0 ns (a sub-µs shm
    // latency over 2 s failed "one-way latency is 0" this way), nor a former point's samples.
    fake_path path;
    path.state_ns = [](std::size_t) { return 1000.0; };
    std::vector<double> samples(max_exact_samples, 0.0);  // as a former point left them
    std::atomic<bool> cancel{false};
    const auto out = run_latency(path.batch(), fixed(1'200'000), samples, cancel);
    REQUIRE(out.code == 0);
    CHECK(out.rtt_ns.count == 1'200'000);
    CHECK(out.rtt_ns.min >= 990);
    CHECK(out.rtt_ns.p50 == doctest::Approx(1000).epsilon(0.01));
    CHECK(out.rtt_ns.mean == doctest::Approx(1000).epsilon(0.01));
    CHECK(out.rtt_ns.max <= 1010);
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
    // 1 s, not less: under ASan on a loaded 2-CPU host 0.2 s once gave too few batches for
    // the block estimate (the CI run of 6c070d4), so the method was the within-sample one.
    spec.max_point_s = 1.0;
    spec.precision = 0.01;
    const auto out = run(path, spec);
    REQUIRE(out.code == 0);
    CHECK_FALSE(out.precision.met);
    REQUIRE(out.precision.method.has_value());
    CHECK(*out.precision.method == precision_method::blocks);
    CHECK(out.precision.achieved > 0.1);
}

/// A slow path: every round trip takes `rtt` of wall time (slept), whatever the message;
/// past `budget` of round trips in all it fails (ETIME), so a runner that ignores its cap
/// fails the test in seconds instead of running for minutes.
struct slow_path {
    std::chrono::milliseconds rtt;
    std::chrono::milliseconds budget{3000};
    std::chrono::milliseconds spent{0};
    std::size_t warm = 0, measured = 0;

    round_trip_batch batch() {
        return [this](std::size_t count, double* out) {
            for (std::size_t i = 0; i < count; ++i) {
                if ((spent += rtt) > budget) return ETIME;
                std::this_thread::sleep_for(rtt);
                if (out) out[i] = static_cast<double>(std::chrono::nanoseconds(rtt).count());
            }
            (out ? measured : warm) += count;
            return 0;
        };
    }
};

latency_outcome run_slow(slow_path& path, const run_spec& spec, double& wall_s) {
    std::vector<double> samples;
    std::atomic<bool> cancel{false};
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run_latency(path.batch(), spec, samples, cancel);
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

TEST_CASE("time cap: batches are sized from the round trip, so a slow path's point ends by its cap") {
    // 20 ms a round trip (1 MiB at about 800 Mbit/s): 500-round-trip batches took 10 s
    // against a 0.3 s cap, and the warm-up's batches of 10 took 0.2 s against 0.1 s.
    slow_path path{std::chrono::milliseconds(20)};
    run_spec spec;
    spec.warmup_s = 0.1;
    spec.max_point_s = 0.3;
    spec.precision = 0.0001;  // never met: the cap ends the point
    double wall = 0;
    const auto out = run_slow(path, spec, wall);
    REQUIRE(out.code == 0);
    CHECK(path.warm >= 4);
    CHECK(path.warm <= 7);
    CHECK(out.measured_s <= 0.3 + 0.02 + 0.1);  // the cap, one round trip, sleep slack (a loaded 2-CPU host, sanitizers)
    CHECK(out.measured_s >= 0.3 - 0.02 - 0.01);
    CHECK(path.measured >= 10);
    CHECK(out.rtt_ns.count == path.measured);
    CHECK(wall <= 0.1 + 0.3 + 0.04 + 0.2);  // 0.2 s for a sanitizer's slack; the fault this guards took 10 s
}

TEST_CASE("time cap: a round trip longer than the cap measures one, after a one-round-trip warm-up") {
    // 300 ms a round trip, so that the two expected (0.6 s) and a third one too many (0.9 s)
    // are 0.3 s apart: room for a sanitizer's slack (a TSan run of CI took 0.43 s for two
    // round trips of 150 ms, against a bound of 0.4).
    slow_path path{std::chrono::milliseconds(300)};
    run_spec spec;
    spec.warmup_s = 0.1;
    spec.max_point_s = 0.1;
    double wall = 0;
    const auto out = run_slow(path, spec, wall);
    REQUIRE(out.code == 0);
    CHECK(path.warm == 1);
    CHECK(path.measured == 1);
    CHECK_FALSE(out.precision.met);
    CHECK(wall >= 2 * 0.3);
    CHECK(wall < 3 * 0.3 - 0.05);
}

TEST_CASE("time cap: a fixed duration sizes its batches the same way") {
    slow_path path{std::chrono::milliseconds(10)};
    run_spec spec;
    spec.warmup_s = 0;
    spec.duration_s = 0.2;
    double wall = 0;
    const auto out = run_slow(path, spec, wall);
    REQUIRE(out.code == 0);
    CHECK(out.measured_s <= 0.2 + 0.01 + 0.05);
    CHECK(path.measured >= 10);
    CHECK(wall <= 0.2 + 0.1 + 0.2);  // 0.2 s for a sanitizer's slack
}

}  // TEST_SUITE

}  // namespace latency_runner_test
