#include "core/check_figures.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace check_figures_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using nlohmann::json;

TEST_CASE("check_figures: one figure per latency and bandwidth point, bidir left out") {
    run_result r;
    point_result lat;
    lat.test = test_kind::latency;
    lat.size_bytes = 8;
    summary s;
    s.count = 10;
    s.p50 = 23'100;
    lat.lat_ns = s;
    point_result bw;
    bw.test = test_kind::bandwidth;
    bw.size_bytes = 1 << 20;
    bw.gbit_per_s = 9.41;
    point_result bi = bw;
    bi.test = test_kind::bidir;
    r.points = {lat, bw, bi};
    const auto f = figures_of(r);
    REQUIRE(f.size() == 2);
    CHECK(f[0].kind == figure_kind::latency);
    CHECK(f[0].value == doctest::Approx(23.1));
    CHECK(f[1].kind == figure_kind::bandwidth);
    CHECK(f[1].value == doctest::Approx(9.41));
    CHECK(check_figure_from_json(to_json(f[0])).value == doctest::Approx(23.1));
    CHECK(to_json(f[1]) == json{{"test", "bandwidth"}, {"size_bytes", 1 << 20}, {"gbit_per_s", 9.41}});
}

TEST_CASE("check_figures: baseline documents filter by peer and transport") {
    const json doc = {{"baselines",
                       {{{"peer", "a:7470"}, {"transport", "tcp"}, {"test", "latency"}, {"size_bytes", 8}, {"lat_us", 20.0}},
                        {{"peer", "b:7470"}, {"transport", "tcp"}, {"test", "latency"}, {"size_bytes", 8}, {"lat_us", 30.0}},
                        {{"peer", "a:7470"}, {"transport", "rdma"}, {"test", "latency"}, {"size_bytes", 8}, {"lat_us", 3.0}},
                        {{"test", "bandwidth"}, {"size_bytes", 1048576}, {"gbit_per_s", 9.0}}}}};
    const auto f = baseline_figures_from_json(doc, "a:7470", "tcp");
    REQUIRE(f.size() == 2);
    CHECK(f[0].value == 20.0);
    CHECK(f[1].kind == figure_kind::bandwidth);
    CHECK_THROWS_AS(baseline_figures_from_json(json{{"x", 1}}, "a", "tcp"), spec_error);
    CHECK_THROWS_AS(check_figure_from_json(json{{"test", "latency"}, {"size_bytes", 8}, {"lat_us", -1}}), spec_error);
    CHECK_THROWS_AS(check_figure_from_json(json{{"test", "bandwidth"}, {"size_bytes", 0}, {"gbit_per_s", 1}}), spec_error);
    // A "test" that is not a string is spec_error too, not json::type_error (found by fuzzing).
    CHECK_THROWS_AS(check_figure_from_json(json{{"test", 1}}), spec_error);
    CHECK_THROWS_AS(check_figure_from_json(json{{"test", json::array()}, {"size_bytes", 8}, {"lat_us", 1}}), spec_error);
}

}  // namespace check_figures_test
