#include "core/error.hpp"
#include "core/flow_tracker.hpp"

#include <cmath>
#include <cstdint>
#include <doctest/doctest.h>
#include <vector>

namespace flow_tracker_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Approx;

namespace {

using counts = std::vector<std::uint64_t>;

/// A point of 100-byte messages whose figures pass the result sanity check.
point_result point_of(const flow_figures& f) {
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 100;
    p.flows = {f};
    p.gbit_per_s = f.gbit_per_s;
    p.msg_per_s = f.msg_per_s;
    p.duration_s = f.seconds;
    return p;
}

}  // namespace

TEST_SUITE("flow_tracker") {

TEST_CASE("a window that holds no bytes: figures over the whole point, warm-up included") {
    // A lossy path: 3000 bytes arrived in the warm-up, none after it up to the cap.
    flow_tracker t(2, 0.1);
    t.add(0.05, counts{1000, 2000});
    t.add(0.1, counts{1000, 2000});
    t.add(0.5, counts{1000, 2000});
    t.add(1.1, counts{1000, 2000});
    CHECK(t.window_empty());
    CHECK_THROWS_AS(t.figures("initiator->peer", 100), insane_figure);
    const auto f = t.whole_point_figures("initiator->peer", 100);
    CHECK(f.bytes == 3000);
    CHECK(f.seconds == Approx(1.1));
    CHECK(f.gbit_per_s == Approx(3000 * 8 / 1.1 / 1e9));
    CHECK(f.stream_gbit_per_s.size() == 2);
    check_sane(point_of(f));
    // Bytes in the window: not empty.
    t.add(1.2, counts{1100, 2000});
    CHECK_FALSE(t.window_empty());
    // Nothing at all: no figure, said.
    flow_tracker none(1, 0.1);
    none.add(0.5, counts{0});
    none.add(1.1, counts{0});
    CHECK(none.window_empty());
    CHECK_THROWS_AS(none.whole_point_figures("x", 100), insane_figure);
}

TEST_CASE("snapshots during the warm-up are ignored; the first after it is the baseline") {
    flow_tracker t(1, 0.5);
    CHECK_FALSE(t.warmed_up());
    t.add(0.1, counts{100});
    t.add(0.3, counts{900});
    t.add(0.49, counts{1500});
    CHECK_FALSE(t.warmed_up());
    CHECK(t.intervals() == 0);
    CHECK(t.measured_s() == 0.0);
    t.add(0.5, counts{2000});  // at the warm-up time: the baseline
    CHECK(t.warmed_up());
    CHECK(t.intervals() == 0);
    CHECK(t.mean_interval_rate() == 0.0);
    CHECK(std::isinf(t.relative_half_width()));
    t.add(1.0, counts{3000});
    CHECK(t.intervals() == 1);
    CHECK(t.measured_s() == Approx(0.5));
    CHECK(t.mean_interval_rate() == Approx(2000.0));  // 1000 B in 0.5 s
    CHECK(std::isinf(t.relative_half_width()));       // one interval: no interval yet

    const auto f = t.figures("initiator->peer", 100);
    CHECK(f.bytes == 1000);  // bytes before the baseline are not counted
    CHECK(f.seconds == Approx(0.5));
}

TEST_CASE("with no warm-up the first snapshot is the baseline") {
    flow_tracker t(1, 0.0);
    t.add(0.0, counts{0});
    CHECK(t.warmed_up());
    t.add(0.25, counts{250});
    CHECK(t.intervals() == 1);
    CHECK(t.mean_interval_rate() == Approx(1000.0));
}

TEST_CASE("interval rates, and a constant rate has zero relative half-width") {
    flow_tracker t(1, 0.1);
    t.add(0.1, counts{0});
    for (int i = 1; i <= 10; ++i) t.add(0.1 + 0.1 * i, counts{static_cast<std::uint64_t>(i) * 125'000'000});
    CHECK(t.intervals() == 10);
    CHECK(t.mean_interval_rate() == Approx(1.25e9));  // 10 Gbit/s
    CHECK(t.relative_half_width() == Approx(0.0).epsilon(1e-9));
    const auto f = t.figures("initiator->peer", 100);
    CHECK(f.interval_min_gbit == Approx(10.0));
    CHECK(f.interval_max_gbit == Approx(10.0));
}

TEST_CASE("relative half-width of varying rates follows Student t") {
    flow_tracker t(1, 0.0);
    t.add(0.0, counts{0});
    t.add(1.0, counts{1000});  // 1000 B/s
    t.add(2.0, counts{4000});  // 3000 B/s
    CHECK(t.intervals() == 2);
    CHECK(t.mean_interval_rate() == Approx(2000.0));
    // sd = sqrt(2) * 1000; half-width = t(1) * sd / sqrt(2) = 12.706 * 1000; relative to 2000.
    CHECK(t.relative_half_width() == Approx(12.706 * 1000.0 / 2000.0));
    const auto f = t.figures("x", 100);
    CHECK(f.interval_min_gbit == Approx(1000.0 * 8 / 1e9));
    CHECK(f.interval_max_gbit == Approx(3000.0 * 8 / 1e9));
}

TEST_CASE("figures: bytes, seconds, Gbit/s and msg/s agree and pass the sanity check") {
    flow_tracker t(1, 0.2);
    t.add(0.2, counts{5'000'000});
    t.add(0.7, counts{505'000'000});
    t.add(1.2, counts{1'005'000'000});
    const auto f = t.figures("peer->initiator", 100);
    CHECK(f.direction == "peer->initiator");
    CHECK(f.bytes == 1'000'000'000);
    CHECK(f.seconds == Approx(1.0));
    CHECK(f.gbit_per_s == Approx(8.0));                      // 1e9 B * 8 / 1 s / 1e9
    CHECK(f.msg_per_s == Approx(1e7));                       // 1e9 B / 100 B / 1 s
    CHECK(f.gbit_per_s == Approx(static_cast<double>(f.bytes) * 8 / f.seconds / 1e9));
    REQUIRE(f.stream_gbit_per_s.size() == 1);
    CHECK(f.stream_gbit_per_s[0] == Approx(f.gbit_per_s));
    CHECK_NOTHROW(check_sane(point_of(f)));
}

TEST_CASE("per-stream figures over the same window") {
    flow_tracker t(3, 0.0);
    t.add(0.0, counts{100, 200, 300});
    t.add(1.0, counts{1100, 3200, 300});
    t.add(2.0, counts{2100, 6200, 300});  // stream 2 is stalled
    const auto f = t.figures("initiator->peer", 100);
    CHECK(f.bytes == 2000 + 6000);
    CHECK(f.seconds == Approx(2.0));
    REQUIRE(f.stream_gbit_per_s.size() == 3);
    CHECK(f.stream_gbit_per_s[0] == Approx(2000.0 * 8 / 2.0 / 1e9));
    CHECK(f.stream_gbit_per_s[1] == Approx(6000.0 * 8 / 2.0 / 1e9));
    CHECK(f.stream_gbit_per_s[2] == 0.0);
    double sum = 0;
    for (double s : f.stream_gbit_per_s) sum += s;
    CHECK(sum == Approx(f.gbit_per_s));
    CHECK_NOTHROW(check_sane(point_of(f)));
}

TEST_CASE("snapshots out of time order or with the wrong stream count are ignored") {
    flow_tracker t(2, 0.0);
    t.add(0.0, counts{0, 0});
    t.add(1.0, counts{1000, 1000});
    t.add(1.0, counts{5000, 5000});  // same time: ignored
    t.add(0.5, counts{9000, 9000});  // earlier: ignored
    t.add(2.0, counts{1});           // wrong stream count: ignored
    CHECK(t.intervals() == 1);
    const auto f = t.figures("x", 100);
    CHECK(f.bytes == 2000);
    t.add(2.0, counts{2000, 2000});
    CHECK(t.intervals() == 2);
    CHECK(t.mean_interval_rate() == Approx(2000.0));
}

TEST_CASE("figures throw when there is no measured window or nothing moved") {
    flow_tracker none(1, 0.5);
    CHECK_THROWS_AS(none.figures("initiator->peer", 64), insane_figure);
    none.add(0.1, counts{10});
    CHECK_THROWS_AS(none.figures("initiator->peer", 64), insane_figure);  // still warming up

    flow_tracker only_baseline(1, 0.0);
    only_baseline.add(0.0, counts{10});
    CHECK_THROWS_WITH_AS(only_baseline.figures("initiator->peer", 64), doctest::Contains("no measured interval"), insane_figure);

    flow_tracker stalled(2, 0.0);
    stalled.add(0.0, counts{500, 500});
    stalled.add(1.0, counts{500, 500});
    stalled.add(2.0, counts{500, 500});
    CHECK_THROWS_WITH_AS(stalled.figures("peer->initiator", 64), doctest::Contains("peer->initiator: no bytes arrived"), insane_figure);
    CHECK(std::isinf(stalled.relative_half_width()));  // zero rate
}

TEST_CASE("fixed_count_figures: window from the earliest begin to the latest end") {
    const counts bytes{1000, 3000};
    const std::vector<std::int64_t> begin{1'000'000'000, 1'100'000'000};
    const std::vector<std::int64_t> end{2'000'000'000, 2'000'000'000};
    const auto f = fixed_count_figures("initiator->peer", 100, bytes, begin, end);
    CHECK(f.direction == "initiator->peer");
    CHECK(f.bytes == 4000);
    CHECK(f.seconds == Approx(1.0));
    CHECK(f.gbit_per_s == Approx(4000.0 * 8 / 1e9));
    CHECK(f.msg_per_s == Approx(40.0));
    REQUIRE(f.stream_gbit_per_s.size() == 2);
    CHECK(f.stream_gbit_per_s[0] == Approx(1000.0 * 8 / 1.0 / 1e9));
    CHECK(f.stream_gbit_per_s[1] == Approx(3000.0 * 8 / 0.9 / 1e9));
    CHECK(f.interval_min_gbit == Approx(f.stream_gbit_per_s[0]));
    CHECK(f.interval_max_gbit == Approx(f.stream_gbit_per_s[1]));
    CHECK_NOTHROW(check_sane(point_of(f)));
}

TEST_CASE("fixed_count_figures: incomplete reports and empty windows throw") {
    const counts one{1000};
    const std::vector<std::int64_t> b{1'000'000'000}, e{2'000'000'000};
    CHECK_THROWS_WITH_AS(fixed_count_figures("x", 100, counts{}, {}, {}), doctest::Contains("incomplete"), insane_figure);
    CHECK_THROWS_AS(fixed_count_figures("x", 100, counts{1, 2}, b, e), insane_figure);
    CHECK_THROWS_AS(fixed_count_figures("x", 100, one, b, std::vector<std::int64_t>{}), insane_figure);
    CHECK_THROWS_WITH_AS(fixed_count_figures("x", 100, one, e, b), doctest::Contains("window is empty"), insane_figure);
    CHECK_THROWS_WITH_AS(fixed_count_figures("x", 100, one, b, b), doctest::Contains("window is empty"), insane_figure);
    CHECK_THROWS_AS(fixed_count_figures("x", 100, one, std::vector<std::int64_t>{0}, e), insane_figure);  // never started
    CHECK_THROWS_WITH_AS(fixed_count_figures("x", 100, counts{0}, b, e), doctest::Contains("no bytes arrived"), insane_figure);
}

TEST_CASE("fixed_count_figures: a stream with an empty window reports 0, the flow still counts it") {
    const counts bytes{1000, 500};
    const std::vector<std::int64_t> begin{1'000'000'000, 1'500'000'000};
    const std::vector<std::int64_t> end{2'000'000'000, 1'500'000'000};
    const auto f = fixed_count_figures("x", 100, bytes, begin, end);
    CHECK(f.bytes == 1500);
    CHECK(f.stream_gbit_per_s[1] == 0.0);
    CHECK(f.seconds == Approx(1.0));
}

TEST_CASE("fixed_count_figures: a peer's extreme figures neither overflow nor pass (found by fuzzing)") {
    // tests/fuzz/corpus/frame_decoder/point_done_extreme_ns: end - begin overflowed int64.
    const std::vector<std::int64_t> begin{1, INT64_MAX}, end{INT64_MIN, INT64_MAX};
    const auto f = fixed_count_figures("x", 100, counts{1, 2}, begin, end);
    CHECK(f.stream_gbit_per_s[0] == 0.0);  // inverted window
    CHECK(f.stream_gbit_per_s[1] == 0.0);  // empty window
    CHECK_THROWS_WITH_AS(fixed_count_figures("x", 100, counts{UINT64_MAX, 2}, begin, end), doctest::Contains("overflow"),
                         insane_figure);
}

}  // TEST_SUITE

TEST_SUITE("flow_tracker: between-block interval") {

TEST_CASE("a rate that holds each of two levels for stretches of intervals reports the between-block interval") {
    // 256 intervals of 25 ms; the rate holds 10 or 12 Gbit/s for 16 intervals at a time.
    // Taken as independent the intervals give about ±1%; the blocks (8 intervals each)
    // show the swings, about three times wider.
    flow_tracker t(1, 0.0);
    std::uint64_t bytes = 0;
    t.add(0.0, counts{bytes});
    for (int i = 1; i <= 256; ++i) {
        const double gbit = ((i - 1) / 16) % 2 ? 12.0 : 10.0;
        bytes += static_cast<std::uint64_t>(gbit * 1e9 / 8 * 0.025);
        t.add(0.025 * i, counts{bytes});
    }
    const auto c = t.precision();
    CHECK(c.method == precision_method::blocks);
    CHECK(c.blocks == 32);
    CHECK(c.samples_relative_half_width == Approx(t.relative_half_width()));
    CHECK(c.relative_half_width > 2 * c.samples_relative_half_width);
    const auto g = t.block_gbit_per_s();
    REQUIRE(g.size() == 32);
    CHECK(g.front() == Approx(10.0));
    CHECK(g[2] == Approx(12.0));
}

TEST_CASE("a steady rate keeps the per-interval interval; up to max_blocks intervals each interval is a block") {
    flow_tracker t(1, 0.0);
    t.add(0.0, counts{0});
    for (int i = 1; i <= 20; ++i) t.add(0.025 * i, counts{static_cast<std::uint64_t>(i) * 31'250'000 + (i % 2) * 1000});
    const auto c = t.precision();
    CHECK(c.method == precision_method::samples);
    CHECK(c.blocks == 20);
    CHECK(c.relative_half_width == Approx(t.relative_half_width()));
}

TEST_CASE("two intervals are too few blocks") {
    flow_tracker t(1, 0.0);
    t.add(0.0, counts{0});
    t.add(0.025, counts{1000});
    t.add(0.050, counts{2000});
    const auto c = t.precision();
    CHECK(c.method == precision_method::too_few_blocks);
    CHECK_FALSE(target_met(c, 0.5));
}

}  // TEST_SUITE

}  // namespace flow_tracker_test
