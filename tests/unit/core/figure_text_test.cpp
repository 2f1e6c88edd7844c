// core/figure_text: numbers people read are never in scientific notation (issue 26: "time
// 2.925e+05 µs", "±2.1e+02%", CSV "2.28833e+06"), and the places that printed them.
#include "analysis/collective/predictions.hpp"
#include "client/collective/check.hpp"
#include "client/render/table.hpp"
#include "core/collective/result.hpp"
#include "core/figure_text.hpp"
#include "core/result.hpp"

#include <doctest/doctest.h>
#include <string>

namespace figure_text_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

TEST_CASE("plain_number: %g's digits without its exponent") {
    CHECK(core::plain_number(2.925e5, 4) == "292500");
    CHECK(core::plain_number(2288330.4, 6) == "2288330");
    CHECK(core::plain_number(210.4, 2) == "210");
    CHECK(core::plain_number(0.25, 6) == "0.25");
    CHECK(core::plain_number(1.5e-5, 3) == "0.000015");
    CHECK(core::plain_number(1.23456e-7, 3) == "0.000000123");
    CHECK(core::plain_number(4.0, 6) == "4");
    CHECK(core::plain_number(-3.5e6, 3) == "-3500000");
    CHECK(core::plain_number(0, 3) == "0");
    CHECK(core::plain_number(9.9996, 4) == "10");
    CHECK(core::plain_number(1.0 / 0.0, 3) == "-");
}

TEST_CASE("check --collective: a slow point's time reads in plain digits") {
    using series = std::vector<std::vector<double>>;
    core::collective_result r;
    r.id = "c-1";
    r.state = core::run_state::completed;
    r.spec.hosts = {"n0:7470", "n1:7470"};
    r.points = {core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 2, core::dtype::fp32,
                                                4'000'000, series(2, std::vector<double>(3, 0.2925)), {}, {})};
    client::collective_limits l;
    l.min_busbw = 100;
    const auto v = client::judge_collective(r, l);
    CHECK(v.summary.find("time 292500 µs") != std::string::npos);
    CHECK(v.summary.find("e+") == std::string::npos);
}

TEST_CASE("CSV of a run: no exponent in its figures") {
    core::run_result run;
    run.id = "r-1";
    run.state = core::run_state::completed;
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    p.gbit_per_s = 2288330.4;  // absurd, but it must still read in digits
    p.msg_per_s = 2.5e-5;
    run.points.push_back(p);
    const auto csv = core::to_csv_row(run, run.points[0]);
    CHECK(csv.find("e+0") == std::string::npos);
    CHECK(csv.find("e-0") == std::string::npos);
    CHECK(csv.find("2288330") != std::string::npos);
}

TEST_CASE("a run's table: a wide precision reads ±210%, not ±2.1e+02%") {
    core::run_result run;
    run.id = "r-1";
    run.state = core::run_state::completed;
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = 64;
    p.lat_ns = core::summary{100, 2000, 2100, 2500, 2600, 3000, 2050, 100};
    p.rtt_ns = core::summary{100, 4000, 4200, 5000, 5200, 6000, 4100, 200};
    p.precision.achieved = 2.1;
    run.points.push_back(p);
    const auto table = client::render_run_table(run);
    CHECK(table.find("±210%") != std::string::npos);
    CHECK(table.find("e+0") == std::string::npos);
}

}  // namespace figure_text_test
