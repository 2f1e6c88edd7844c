#include "client/support/progress.hpp"
#include "client/render/table.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <string>

namespace progress_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

core::point_result latency_point(std::uint64_t size, double p50_ns) {
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = size;
    core::summary s;
    s.count = 100;
    s.p50 = p50_ns;
    p.lat_ns = s;
    return p;
}

}  // namespace

TEST_SUITE("progress") {

TEST_CASE("time bound of a point from the spec") {
    core::run_spec s;
    s.warmup_s = 0.1;
    s.max_point_s = 1.0;
    // latency and bandwidth: the bandwidth point's close bound counts
    CHECK(*client::point_time_bound_s(s) == doctest::Approx(1.1 + core::point_overrun_bound_s));
    s.duration_s = 2.0;
    CHECK(*client::point_time_bound_s(s) == doctest::Approx(2.1 + core::point_overrun_bound_s));
    s.tests = {core::test_kind::latency};  // a latency point ends after its batch: no close
    CHECK(*client::point_time_bound_s(s) == doctest::Approx(2.1));
    s.tests = {core::test_kind::latency, core::test_kind::bandwidth};
    s.duration_s.reset();
    s.iterations = 1000;
    CHECK_FALSE(client::point_time_bound_s(s));
}

TEST_CASE("the least time of a full matrix: rounds, waves of pairs, both directions") {
    // 4 hosts: 3 rounds of 2 pairs; 2 at once: one wave; 2 directions of 1 s.
    CHECK(client::full_matrix_floor_s(4, 2, 1.0) == doctest::Approx(3 * 1 * 2 * 1.0));
    CHECK(client::full_matrix_floor_s(4, 1, 1.0) == doctest::Approx(3 * 2 * 2 * 1.0));
    // 10,000 hosts, every pair of a round at once, 0.6 s a direction: 9,999 rounds, ~3.3 h.
    CHECK(client::full_matrix_floor_s(10000, 5000, 0.6) == doctest::Approx(9999 * 2 * 0.6));
    CHECK(client::full_matrix_floor_s(1, 1, 1.0) == 0);
}

TEST_CASE("time bound of a sweep: every point, the drift reference readings, and the per-point overhead") {
    core::run_spec s;
    s.warmup_s = 0.1;
    s.max_point_s = 0.3;
    s.tests = {core::test_kind::latency};
    s.sizes = {262144, 1048576};  // under drift_min_sizes: no reference readings
    CHECK(client::reference_point_count(s) == 0);
    CHECK(*client::sweep_time_bound_s(s) == doctest::Approx(2 * (0.4 + client::point_overhead_s)));
    // 1..64: 7 sizes; the reference is read again after point 4 and after the last.
    s.sizes = {1, 2, 4, 8, 16, 32, 64};
    CHECK(client::reference_point_count(s) == 2);
    s.tests = {core::test_kind::latency, core::test_kind::bandwidth};  // bandwidth has none
    CHECK(client::reference_point_count(s) == 2);
    // 7 latency points and 2 references at 0.4 s, 7 bandwidth points at 0.4 s + the close
    CHECK(*client::sweep_time_bound_s(s) ==
          doctest::Approx((7 + 2) * (0.4 + client::point_overhead_s) +
                          7 * (0.4 + core::point_overrun_bound_s + client::point_overhead_s)));
    s.iterations = 100;
    CHECK_FALSE(client::sweep_time_bound_s(s));
}

TEST_CASE("time left: measured mean per point, else the spec's bound; never negative or NaN") {
    CHECK(*client::estimate_seconds_left(0, 16, 0, 1.1) == doctest::Approx(17.6));
    CHECK(*client::estimate_seconds_left(4, 16, 2.0, 1.1) == doctest::Approx(6.0));  // 0.5 s a point measured
    CHECK(*client::estimate_seconds_left(16, 16, 30, 1.1) == 0);
    CHECK(*client::estimate_seconds_left(17, 16, 30, 1.1) == 0);  // more done than total: nothing left, not negative
    CHECK_FALSE(client::estimate_seconds_left(0, 16, 0, std::nullopt));  // iterations: unknown before a point
    CHECK_FALSE(client::estimate_seconds_left(0, 0, 0, 1.1));
    CHECK(*client::estimate_seconds_left(2, 16, -5, 1.1) == doctest::Approx(15.4));  // a bad clock falls back to the bound
    CHECK(*client::estimate_seconds_left(2, 16, std::nan(""), 1.1) == doctest::Approx(15.4));
    CHECK_FALSE(client::estimate_seconds_left(0, 16, 0, std::numeric_limits<double>::infinity()));
    CHECK_FALSE(client::estimate_seconds_left(0, 16, 0, std::nan("")));
    CHECK_FALSE(client::estimate_seconds_left(2, 16, std::numeric_limits<double>::infinity(), std::nullopt));
}

TEST_CASE("time left from the share done, for jobs counted in rounds (matrix)") {
    CHECK(*client::seconds_left_at(0.25, 10) == doctest::Approx(30));
    CHECK(*client::seconds_left_at(1.0, 10) == 0);
    CHECK(*client::seconds_left_at(1.5, 10) == 0);
    CHECK_FALSE(client::seconds_left_at(0, 10));
    CHECK_FALSE(client::seconds_left_at(0.5, -1));
    CHECK_FALSE(client::seconds_left_at(std::nan(""), 10));
    CHECK_FALSE(client::seconds_left_at(0.5, std::numeric_limits<double>::infinity()));
    CHECK_FALSE(client::seconds_left_at(1e-320, 10));  // would overflow to infinity
}

TEST_CASE("durations read as people say them") {
    CHECK(client::about_duration(0.3) == "under a second");
    CHECK(client::about_duration(-4) == "under a second");
    CHECK(client::about_duration(std::nan("")) == "under a second");
    CHECK(client::about_duration(40.4) == "about 40 s");
    CHECK(client::about_duration(200) == "about 3 min");
    CHECK(client::about_duration(3900) == "about 65 min");
    CHECK(client::about_duration(7500) == "about 2 h 5 min");
}

TEST_CASE("progress line: share done, the point, and the time left; the last at 100%") {
    const auto p = latency_point(64, 12'300);
    const auto first = client::progress_line(client::point_progress_line(p, 1, 16), 1, 16, 0.6, 1.1);
    CAPTURE(first);
    CHECK(first.rfind("[  1/16]   6% latency", 0) == 0);
    CHECK(first.find("p50 12.30 µs") != std::string::npos);
    CHECK(first.ends_with("about 9 s left"));
    const auto last = client::progress_line(client::point_progress_line(p, 16, 16), 16, 16, 52.2, 1.1);
    CAPTURE(last);
    CHECK(last.rfind("[ 16/16] 100% ", 0) == 0);
    CHECK(last.ends_with("done in 52 s"));
    CHECK(client::progress_line(client::point_progress_line(p, 3, 16), 3, 16, 2, std::nullopt).ends_with("about 9 s left"));
    CHECK(client::progress_line(client::point_progress_line(p, 0, 16), 0, 16, 0, std::nullopt).ends_with("time left unknown"));
    for (const auto& line : {first, last}) {
        CHECK(line.find('\r') == std::string::npos);
        CHECK(line.find('\033') == std::string::npos);
    }
}

TEST_CASE("matrix phase line: rounds so far and the time left at the measured pace per round") {
    // Round 1 has not finished a pair yet: nothing measured, no estimate.
    CHECK(client::phase_progress_line("round", 1, 15, "pairs", 0, 8, 0.2) == "matrix: round 1 of 15, pairs done 0/8 (0%)");
    // Rounds 1 and 2 took 3 s: 1.5 s a round, 13 rounds left: about 20 s.
    CHECK(client::phase_progress_line("round", 3, 15, "pairs", 0, 8, 3.0) ==
          "matrix: round 3 of 15, pairs done 0/8 (13%, about 20 s left)");
    // Half of round 3 as well: 2.5 rounds in 3.75 s, 12.5 left.
    CHECK(client::phase_progress_line("round", 3, 15, "pairs", 4, 8, 3.75) ==
          "matrix: round 3 of 15, pairs done 4/8 (16%, about 19 s left)");
    // 2,047 rounds at 1.5 s each: the hours are said as hours.
    CHECK(client::phase_progress_line("round", 101, 2047, "pairs", 0, 1024, 150.0) ==
          "matrix: round 101 of 2047, pairs done 0/1024 (4%, about 49 min left)");
    CHECK(client::phase_progress_line("round", 11, 2047, "pairs", 0, 1024, 15.0).ends_with("(0%, about 51 min left)"));
    CHECK(client::phase_progress_line("wave", 2, 2, "links", 5, 5, 4.0) == "matrix: wave 2 of 2, links done 5/5 (100%, done)");
    // Nonsense in (more done than there are, a step past the end, no jobs) stays sane.
    CHECK(client::phase_progress_line("round", 2, 2, "pairs", 9, 5, 4.0).ends_with("done 5/5 (100%, done)"));
    CHECK(client::phase_progress_line("round", 1, 0, "pairs", 0, 0, 1.0) == "matrix: round 1 of 0, pairs done 0/0 (0%)");
    const auto line = client::phase_progress_line("round", 3, 15, "pairs", 4, 8, std::nan(""));
    CHECK(line == "matrix: round 3 of 15, pairs done 4/8 (16%)");
    CHECK(line.find('\r') == std::string::npos);
}

}  // TEST_SUITE

}  // namespace progress_test
