// core/sweep_drift and the initiator's sweep loop: a latency sweep measures its first size
// again every few points, and the spread of those readings bounds every point's precision.
#include "core/sweep_drift.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "daemon/sweep/initiator.hpp"

#include <atomic>
#include <cmath>
#include <algorithm>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace sweep_drift_test {  // one per test file: the unit tests are built in batches (unity build)

namespace core = meshperf::core;
namespace md = meshperf::daemon;

namespace {

core::point_result latency_point(std::uint64_t size, double rtt_p50, double achieved) {
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = size;
    core::summary rtt;
    rtt.count = 100;
    rtt.min = rtt.p50 = rtt.p90 = rtt.p99 = rtt.p999 = rtt.max = rtt.mean = rtt_p50;
    core::summary lat = rtt;
    lat.min = lat.p50 = lat.p90 = lat.p99 = lat.p999 = lat.max = lat.mean = rtt_p50 / 2;
    p.rtt_ns = rtt;
    p.lat_ns = lat;
    p.precision.adaptive = true;
    p.precision.target = 0.01;
    p.precision.achieved = achieved;
    p.precision.met = achieved <= 0.01;
    p.precision.method = core::precision_method::samples;
    return p;
}

core::run_spec latency_spec(std::size_t sizes) {
    core::run_spec s;
    s.peer = "127.0.0.1:7470";
    s.tests = {core::test_kind::latency};
    for (std::size_t i = 0; i < sizes; ++i) s.sizes.push_back(std::uint64_t{1} << i);
    return s;
}

}  // namespace

TEST_CASE("the reference is due after every 4th point and after the last") {
    std::vector<std::size_t> due;
    for (std::size_t d = 1; d <= 16; ++d)
        if (core::reference_due(d, 16)) due.push_back(d);
    CHECK(due == std::vector<std::size_t>{4, 8, 12, 16});
    due.clear();
    for (std::size_t d = 1; d <= 6; ++d)
        if (core::reference_due(d, 6)) due.push_back(d);
    CHECK(due == std::vector<std::size_t>{4, 6});
    CHECK_FALSE(core::reference_due(0, 6));
    CHECK_FALSE(core::reference_due(7, 6));
}

TEST_CASE("only latency tests of 4 sizes or more are drift-checked") {
    auto s = latency_spec(4);
    CHECK(core::wants_drift_check(s, core::test_kind::latency));
    CHECK_FALSE(core::wants_drift_check(s, core::test_kind::bandwidth));
    CHECK_FALSE(core::wants_drift_check(latency_spec(3), core::test_kind::latency));
}

TEST_CASE("drift half-width: the 95% prediction interval of one more reading") {
    const std::vector<double> flat{100, 100, 100, 100};
    CHECK(core::drift_half_width(flat) == 0);
    // mean 16, s 2, n 3: t(2) · 2 · sqrt(4/3) / 16
    const std::vector<double> phases{14, 18, 16};
    CHECK(core::drift_half_width(phases) == doctest::Approx(core::t_quantile_95(2) * 2 * std::sqrt(4.0 / 3) / 16));
    CHECK(core::t_quantile_95(2) == doctest::Approx(4.303).epsilon(0.001));
    // n 5: mean 32, s 4
    const std::vector<double> five{28, 36, 28, 36, 32};
    CHECK(core::drift_half_width(five) == doctest::Approx(core::t_quantile_95(4) * 4 * std::sqrt(1.2) / 32));
    const std::vector<double> two{10, 20};
    CHECK(std::isinf(core::drift_half_width(two)));
    const std::vector<double> bad{10, 0, 12};
    CHECK_THROWS_AS(core::drift_half_width(bad), core::insane_figure);
    const std::vector<double> nan{10, std::nan(""), 12};
    CHECK_THROWS_AS(core::drift_half_width(nan), core::insane_figure);
}

TEST_CASE("apply_drift widens only the narrower latency points, re-judges the target and warns") {
    core::run_result run;
    run.spec = latency_spec(4);
    run.spec.tests = {core::test_kind::latency, core::test_kind::bandwidth};
    run.points = {latency_point(1, 30000, 0.003), latency_point(2, 30000, 0.2), latency_point(4, 31000, 0.004),
                  latency_point(8, 32000, 0.005)};
    core::point_result bw;
    bw.test = core::test_kind::bandwidth;
    bw.precision.achieved = 0.002;
    run.points.push_back(bw);
    core::sweep_drift d{core::test_kind::latency, 1, {{0, 28000}, {4, 36000}, {8, 32000}}, {}, 0};
    core::settle(d);
    const double drift = core::t_quantile_95(2) * 4000 * std::sqrt(4.0 / 3) / 32000;  // ≈ 0.62
    REQUIRE(d.relative_half_width == doctest::Approx(drift));
    core::apply_drift(run, d);
    CHECK(run.points[0].precision.achieved == doctest::Approx(drift));
    CHECK(run.points[0].precision.method == core::precision_method::drift);
    CHECK_FALSE(run.points[0].precision.met);
    CHECK(run.points[1].precision.achieved == doctest::Approx(drift));  // its own 0.2 is narrower than the drift
    CHECK(run.points[1].precision.method == core::precision_method::drift);
    CHECK(run.points[4].precision.achieved == 0.002);  // bandwidth untouched
    CHECK_FALSE(run.points[4].precision.method.has_value());
    REQUIRE(run.warnings.size() == 1);
    CHECK(run.warnings[0].find("latency drifted during the sweep") != std::string::npos);
    CHECK(run.warnings[0].find("14..18 µs") != std::string::npos);
    CHECK(run.warnings[0].find("4 of 4 points") != std::string::npos);
}

TEST_CASE("apply_drift leaves a point whose own interval is wider, and records the drift on it") {
    core::run_result run;
    run.spec = latency_spec(4);
    run.points = {latency_point(1, 30000, 0.5), latency_point(2, 30000, 0.001)};
    core::sweep_drift d{core::test_kind::latency, 1, {{0, 30000}, {4, 30030}, {8, 30015}}, {}, 0};
    core::settle(d);
    core::apply_drift(run, d);
    CHECK(run.points[0].precision.achieved == 0.5);
    CHECK(run.points[0].precision.method == core::precision_method::samples);
    CHECK(run.points[0].precision.drift_achieved == doctest::Approx(d.relative_half_width));
    CHECK(run.points[1].precision.method == core::precision_method::drift);
    CHECK(run.points[1].precision.met);  // 1% target, drift 0.25%
}

TEST_CASE("a run's drift and a point's drift precision survive JSON") {
    core::run_result run;
    run.id = "r1";
    run.state = core::run_state::completed;
    run.spec = latency_spec(4);
    run.points = {latency_point(1, 30000, 0.001)};
    core::sweep_drift d{core::test_kind::latency, 1, {{0, 28000}, {4, 36000}, {8, 32000}}, {}, 0};
    core::settle(d);
    core::apply_drift(run, d);
    run.drift.push_back(d);
    const auto back = core::run_result_from_json(core::to_json(run));
    REQUIRE(back.drift.size() == 1);
    CHECK(back.drift[0].size_bytes == 1);
    REQUIRE(back.drift[0].readings.size() == 3);
    CHECK(back.drift[0].readings[1].after_point == 4);
    CHECK(back.drift[0].readings[1].rtt_ns_p50 == 36000);
    CHECK(back.drift[0].relative_half_width == doctest::Approx(d.relative_half_width));
    CHECK(back.points[0].precision.method == core::precision_method::drift);
    CHECK(back.points[0].precision.drift_achieved == doctest::Approx(d.relative_half_width));
    core::sweep_drift few{core::test_kind::latency, 1, {{0, 1000}}, {}, 0};
    core::settle(few);
    CHECK(std::isinf(core::sweep_drift_from_json(core::to_json(few)).relative_half_width));
    CHECK_THROWS_AS(core::sweep_drift_from_json(nlohmann::json{{"test", "latency"}}), core::spec_error);
}

TEST_CASE("the sweep loop measures the reference every 4 points and keeps it out of the curve") {
    core::run_result run;
    run.spec = latency_spec(16);
    run.spec.tests = {core::test_kind::latency, core::test_kind::bandwidth};
    std::vector<md::point_key> asked;
    std::size_t reference_reads = 0;
    const md::point_measurer measure = [&](const md::point_key& k) {
        asked.push_back(k);
        if (k.test == core::test_kind::bandwidth) {
            core::point_result bw;
            bw.test = k.test;
            bw.size_bytes = k.size;
            return bw;
        }
        // The reference (1 B) reads 28 µs at first, then alternately 36 and 28 µs.
        double rtt = 40000 + 100.0 * static_cast<double>(k.size);
        if (k.size == 1) rtt = asked.size() == 1 ? 28000 : (++reference_reads % 2 ? 36000 : 28000);
        return latency_point(k.size, rtt, 0.002);
    };
    std::vector<nlohmann::json> events;
    const std::atomic<bool> cancel{false};
    md::measure_all_points(run, "", [&](const nlohmann::json& e) { events.push_back(e); }, cancel, measure);
    CHECK(asked.size() == 16 + 4 + 16);
    CHECK(run.points.size() == 32);
    std::vector<std::size_t> reference_at;
    for (std::size_t i = 1; i < asked.size(); ++i)
        if (asked[i].test == core::test_kind::latency && asked[i].size == 1) reference_at.push_back(i);
    CHECK(reference_at == std::vector<std::size_t>{4, 9, 14, 19});  // after points 4, 8, 12 and 16 of the curve
    for (std::size_t i = 0; i < asked.size(); ++i) CHECK(asked[i].index == i + 1);  // session indices stay unique
    REQUIRE(run.drift.size() == 1);
    CHECK(run.drift[0].readings.size() == 5);
    CHECK(run.drift[0].readings[0].after_point == 0);
    CHECK(run.drift[0].readings[4].after_point == 16);
    for (std::size_t i = 0; i < 16; ++i) CHECK(run.points[i].precision.method == core::precision_method::drift);
    for (std::size_t i = 16; i < 32; ++i) CHECK(run.points[i].test == core::test_kind::bandwidth);
    // Events count curve points only.
    REQUIRE(events.size() == 32);
    CHECK(events.back()["index"] == 32);
    CHECK(events.back()["total"] == 32);
}

TEST_CASE("a failed sweep keeps the drift its readings showed") {
    core::run_result run;
    run.spec = latency_spec(16);
    std::size_t calls = 0;
    const md::point_measurer measure = [&](const md::point_key& k) -> core::point_result {
        if (++calls == 13) throw std::runtime_error("peer vanished");
        return latency_point(k.size, k.size == 1 ? (calls % 2 ? 28000 : 36000) : 50000, 0.002);
    };
    const std::atomic<bool> cancel{false};
    CHECK_THROWS_AS(md::measure_all_points(run, "", [](const nlohmann::json&) {}, cancel, measure), md::session_error);
    REQUIRE(run.drift.size() == 1);
    CHECK(run.drift[0].readings.size() == 3);  // the first point and after points 4 and 8
    CHECK(std::isfinite(run.drift[0].relative_half_width));
}

TEST_CASE("a point the curve falls from is measured again, and its precision covers both readings") {
    core::run_result run;
    run.spec = latency_spec(8);
    // 30 µs RTT flat, but the 8 B point caught a slow phase: 38 µs, ±0.2% stated.
    std::vector<double> first{30000, 30100, 30050, 38000, 30200, 30150, 30300, 30400};
    std::size_t rechecks = 0;
    const md::point_measurer measure = [&](const md::point_key& k) {
        for (std::size_t i = 0; i < run.spec.sizes.size(); ++i)
            if (run.spec.sizes[i] == k.size) {
                // The first pass reports `first`; later measurements of a size (references, rechecks) read 30.1 µs.
                const bool in_curve = run.points.size() == i;
                if (!in_curve && k.size != 1) ++rechecks;
                return latency_point(k.size, in_curve ? first[i] : 30100, 0.002);
            }
        FAIL("unexpected size");
        return core::point_result{};
    };
    const std::atomic<bool> cancel{false};
    md::measure_all_points(run, "", [](const nlohmann::json&) {}, cancel, measure);
    CHECK(rechecks == 2);  // the 8 B point and the 16 B point after it
    REQUIRE(run.drift.size() == 1);
    REQUIRE(run.drift[0].rechecks.size() == 2);
    CHECK(run.drift[0].rechecks[0].size_bytes == 8);
    CHECK(run.drift[0].rechecks[0].first_rtt_ns_p50 == 38000);
    CHECK(run.drift[0].rechecks[0].again_rtt_ns_p50 == 30100);
    const auto& spike = run.points[3];
    CHECK(spike.rtt_ns->p50 == 38000);  // the figure stays as measured ...
    CHECK(spike.precision.achieved == doctest::Approx(7900.0 / 38000));  // ... and says how far it moved
    CHECK(spike.precision.method == core::precision_method::drift);
    REQUIRE_FALSE(spike.warnings.empty());
    CHECK(spike.warnings.back().find("measured again") != std::string::npos);
    // Now the fall from 8 B to 16 B is within the stated precision.
    CHECK(core::points_to_recheck(run, core::test_kind::latency).empty());
    const auto back = core::run_result_from_json(core::to_json(run));
    REQUIRE(back.drift[0].rechecks.size() == 2);
    CHECK(back.drift[0].rechecks[1].size_bytes == 16);
}

TEST_CASE("a recheck that lands in the same slow phase is followed by another round, up to 3") {
    const std::atomic<bool> cancel{false};
    for (std::size_t slow_rechecks : {1u, 5u}) {
        CAPTURE(slow_rechecks);
        core::run_result run;
        run.spec = latency_spec(8);
        std::vector<double> first{30000, 30100, 30050, 38000, 30200, 30150, 30300, 30400};
        std::size_t rechecks_of_8 = 0;
        const md::point_measurer measure = [&](const md::point_key& k) {
            for (std::size_t i = 0; i < run.spec.sizes.size(); ++i)
                if (run.spec.sizes[i] == k.size) {
                    const bool in_curve = run.points.size() == i;
                    if (in_curve) return latency_point(k.size, first[i], 0.002);
                    // The 8 B point's first `slow_rechecks` re-measurements stay in its slow phase.
                    if (k.size == 8 && ++rechecks_of_8 <= slow_rechecks) return latency_point(k.size, 38100, 0.002);
                    return latency_point(k.size, 30100, 0.002);
                }
            FAIL("unexpected size");
            return core::point_result{};
        };
        md::measure_all_points(run, "", [](const nlohmann::json&) {}, cancel, measure);
        const auto& spike = run.points[3];
        if (slow_rechecks == 1) {
            CHECK(rechecks_of_8 == 2);  // round 1 read it slow again; round 2 found the fast phase
            CHECK(spike.precision.achieved == doctest::Approx(7900.0 / 38000));
            CHECK(core::points_to_recheck(run, core::test_kind::latency).empty());
            REQUIRE(spike.warnings.size() == 1);  // one warning naming both re-measurements
            const auto& w = spike.warnings[0];
            CHECK(w.find("measured again") != std::string::npos);
            CHECK(std::count(w.begin(), w.end(), ',') >= 1);  // "then A, B µs"
            std::size_t of_8 = 0;
            for (const auto& r : run.drift[0].rechecks) of_8 += r.size_bytes == 8;
            CHECK(of_8 == 2);
        } else {
            CHECK(rechecks_of_8 == core::max_recheck_rounds);  // bounded: the curve still falls, said as it is
            CHECK_FALSE(core::points_to_recheck(run, core::test_kind::latency).empty());
        }
    }
}

TEST_CASE("points_to_recheck: nothing on a rising curve, at most 4 points") {
    core::run_result run;
    run.spec = latency_spec(12);
    for (std::size_t i = 0; i < 12; ++i) run.points.push_back(latency_point(run.spec.sizes[i], 30000 + 10.0 * i, 0.001));
    CHECK(core::points_to_recheck(run, core::test_kind::latency).empty());
    for (std::size_t i = 0; i < 12; ++i) run.points[i].rtt_ns->p50 = i % 2 ? 30000 : 40000;  // a saw
    const auto idx = core::points_to_recheck(run, core::test_kind::latency);
    CHECK(idx == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(core::points_to_recheck(run, core::test_kind::bandwidth).empty());
}

}  // namespace sweep_drift_test
