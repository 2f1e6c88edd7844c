// core/point_counters: a point's TCP counters in the result JSON (absent in older results,
// malformed ones refused), their sanity checks, and the retransmit warning's threshold.
#include "core/error.hpp"
#include "core/point_counters.hpp"
#include "core/result.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace point_counters_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Contains;
using nlohmann::json;

namespace {

tcp_point_counters counters(std::uint64_t retrans, std::uint64_t segs) {
    tcp_point_counters c;
    c.retransmits = retrans;
    c.segments_sent = segs;
    c.rtt_us = {180, 5120};
    c.cwnd = {10, 96};
    return c;
}

point_result bandwidth_point() {
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 65536;
    flow_figures f;
    f.direction = "initiator->peer";
    f.bytes = 25'000'000;
    f.seconds = 1.0;
    f.gbit_per_s = 0.2;
    f.msg_per_s = 25'000'000.0 / 65536.0;
    f.stream_gbit_per_s = {0.2};
    p.flows = {f};
    p.gbit_per_s = f.gbit_per_s;
    p.msg_per_s = f.msg_per_s;
    p.duration_s = 1.0;
    return p;
}

}  // namespace

TEST_SUITE("point_counters") {

TEST_CASE("a point's TCP counters: to JSON as counters.tcp and back") {
    auto p = bandwidth_point();
    p.tcp_counters = counters(37, 12034);
    CHECK_NOTHROW(check_sane(p));
    const auto j = to_json(p);
    const auto& t = j.at("counters").at("tcp");
    CHECK(t.at("retransmits") == 37);
    CHECK(t.at("segments_sent") == 12034);
    CHECK(t.at("retransmit_share").get<double>() == doctest::Approx(37.0 / 12034));
    CHECK(t.at("rtt_us") == json{{"min", 180}, {"max", 5120}});
    CHECK(t.at("cwnd") == json{{"min", 10}, {"max", 96}});
    const auto back = point_result_from_json(j);
    REQUIRE(back.tcp_counters.has_value());
    CHECK(back.tcp_counters->retransmits == 37);
    CHECK(back.tcp_counters->segments_sent == 12034);
    CHECK(back.tcp_counters->rtt_us.max == 5120);
    CHECK(back.tcp_counters->cwnd.min == 10);
}

TEST_CASE("the readings inside the window survive the JSON; an older daemon's counters without them still read") {
    auto c = counters(3, 900);
    c.interval_readings = 40;
    c.rtt_median_us = 900;
    c.rttvar_max_us = 120;
    c.delivery_rate = gauge_range{1'000'000, 24'000'000};
    c.lost_max = 2;
    c.reordering_max = 3;
    const auto j = to_json(c);
    CHECK(j.at("rtt_us").at("median") == 900);
    CHECK(j.at("delivery_rate_bytes_per_s") == json{{"min", 1'000'000}, {"max", 24'000'000}});
    const auto back = tcp_point_counters_from_json(j);
    CHECK(back.interval_readings == 40);
    CHECK(back.rtt_median_us == 900u);
    CHECK(back.rttvar_max_us == 120u);
    REQUIRE(back.delivery_rate);
    CHECK(back.delivery_rate->max == 24'000'000);
    CHECK(back.lost_max == 2u);
    CHECK(back.reordering_max == 3u);
    const auto old = tcp_point_counters_from_json(json{{"retransmits", 1}, {"segments_sent", 10},
                                                       {"rtt_us", {{"min", 5}, {"max", 9}}}, {"cwnd", {{"min", 1}, {"max", 2}}}});
    CHECK_FALSE(old.rtt_median_us);
    CHECK_FALSE(old.delivery_rate);
    CHECK(old.interval_readings == 0);
    // Two sending sides: the larger median and maxima, the wider rate range, readings added.
    auto other = c;
    other.rtt_median_us = 4000;
    other.delivery_rate = gauge_range{500, 2'000'000};
    other.lost_max = 9;
    const auto both = combined(c, other);
    CHECK(both.rtt_median_us == 4000u);
    CHECK(both.delivery_rate->min == 500);
    CHECK(both.delivery_rate->max == 24'000'000);
    CHECK(both.lost_max == 9u);
    CHECK(both.interval_readings == 80);
    auto insane = c;
    insane.rtt_median_us = 1;  // below the smallest RTT read
    CHECK_THROWS_AS(check_sane(insane, true), insane_figure);
}

TEST_CASE("an older result has no counters: absent, not zero, and none written back") {
    const auto j = to_json(bandwidth_point());
    CHECK_FALSE(j.contains("counters"));
    const auto back = point_result_from_json(j);
    CHECK_FALSE(back.tcp_counters.has_value());
    CHECK_FALSE(to_json(back).contains("counters"));
}

TEST_CASE("malformed TCP counters are refused, naming the field") {
    auto j = to_json(counters(1, 10));
    j.erase("segments_sent");
    CHECK_THROWS_WITH_AS(tcp_point_counters_from_json(j), Contains("segments_sent"), spec_error);
    j = to_json(counters(1, 10));
    j["retransmits"] = -1;
    CHECK_THROWS_AS(tcp_point_counters_from_json(j), spec_error);
    j = to_json(counters(1, 10));
    j["rtt_us"] = 5;
    CHECK_THROWS_WITH_AS(tcp_point_counters_from_json(j), Contains("rtt_us"), spec_error);
    CHECK_THROWS_AS(tcp_point_counters_from_json(json::array()), spec_error);
}

TEST_CASE("sanity: no more retransmits than segments, segments when bytes moved, ordered ranges") {
    CHECK_NOTHROW(check_sane(counters(0, 0), false));
    CHECK_THROWS_AS(check_sane(counters(0, 0), true), insane_figure);
    CHECK_THROWS_AS(check_sane(counters(11, 10), true), insane_figure);
    auto c = counters(0, 10);
    c.rtt_us = {200, 100};
    CHECK_THROWS_AS(check_sane(c, true), insane_figure);
    auto p = bandwidth_point();
    p.tcp_counters = counters(0, 0);
    CHECK_THROWS_AS(check_sane(p), insane_figure);
}

TEST_CASE("the retransmit warning: above 1% of the segments sent, naming the counter") {
    CHECK_FALSE(retransmit_warning(counters(37, 12034)).has_value());  // 0.31%
    CHECK_FALSE(retransmit_warning(counters(100, 10000)).has_value()); // exactly 1%
    CHECK_FALSE(retransmit_warning(counters(0, 0)).has_value());
    const auto w = retransmit_warning(counters(412, 20311));
    REQUIRE(w.has_value());
    CHECK(*w == "TCP retransmits: 412 of the 20311 segments sent in the measured window and its close were retransmissions (2.03%, above "
                "1%): the path dropped packets (a shallow queue, loss or congestion), so the figure is what TCP recovered "
                "to, not what the link carries");
}

}  // TEST_SUITE

}  // namespace point_counters_test
