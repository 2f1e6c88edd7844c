// core/counter_intervals: the link counters read inside a point's window, at interval
// boundaries: the spread of the counters that should not move (how many intervals, the
// largest rise, the first), kept only for those; a counter that went down inside the window
// is a reset even when it climbed back above its first value; the spread's sanity checks,
// its JSON and the warning that quotes it.
#include "core/counter_intervals.hpp"
#include "core/counter_verdicts.hpp"
#include "core/error.hpp"
#include "core/counter_sources.hpp"
#include "core/link_counters.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace counter_intervals_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A NIC read before a 3 s window, every 0.25 s inside it (a flap 1.1 s in: carrier_changes
/// +2 in the interval ending at 1.25 s; rx_dropped +1 there and +4 in the last interval) and
/// after it; tx_bytes rises every interval.
link_side_counters flapped_nic() {
    counter_interval_tracker t;
    counter_values v{{"tx_bytes", 1000}, {"carrier_changes", 6}, {"rx_dropped", 0}, {"rx_crc_errors", 0}};
    const counter_values first = v;
    t.start(v);
    for (int k = 1; k <= 12; ++k) {
        v["tx_bytes"] += 25'000'000;
        if (k == 5) {
            v["carrier_changes"] += 2;
            v["rx_dropped"] += 1;
        }
        if (k == 12) v["rx_dropped"] += 4;
        t.add(v, 0.25 * k);
    }
    link_side_counters s;
    s.window_s = 3.0;
    s.intervals = t.intervals();
    s.sources.push_back(nic_source("veth1", counter_delta(first, v)));
    t.apply(s.source("nic")->group("counters"));
    return s;
}

}  // namespace

TEST_CASE("counter intervals: a flap and drops are placed in their intervals; traffic is not followed") {
    const auto s = flapped_nic();
    CHECK(s.intervals == 12);
    const auto& g = s.source("nic")->group("counters");
    CHECK(g.delta("carrier_changes") == 2u);
    REQUIRE(g.intervals.count("carrier_changes"));
    CHECK(g.intervals.at("carrier_changes").intervals == 1);
    CHECK(g.intervals.at("carrier_changes").max_increase == 2);
    CHECK(g.intervals.at("carrier_changes").first_at_s == doctest::Approx(1.25));
    REQUIRE(g.intervals.count("rx_dropped"));
    CHECK(g.intervals.at("rx_dropped").intervals == 2);
    CHECK(g.intervals.at("rx_dropped").max_increase == 4);
    CHECK(g.intervals.at("rx_dropped").first_at_s == doctest::Approx(1.25));
    CHECK(g.intervals.count("tx_bytes") == 0);       // traffic: its delta says enough
    CHECK(g.intervals.count("rx_crc_errors") == 0);  // did not move
    CHECK_NOTHROW(check_sane(s));
    link_counters both{s, std::nullopt};
    const auto warnings = link_counter_warnings(both, "1 MiB bandwidth", 0, 0);
    REQUIRE(warnings.size() == 1);
    CHECK(has(warnings[0], "2 carrier_changes in 1 of 12 intervals, first by 1.25 s"));
    CHECK(has(warnings[0], "5 rx_dropped in 2 of 12 intervals, first by 1.25 s"));
}

TEST_CASE("counter intervals: a counter that went down inside the window is a reset, though it ended above its start") {
    counter_interval_tracker t;
    const counter_values first{{"symbol_error", 40}, {"link_downed", 0}};
    t.start(first);
    t.add({{"symbol_error", 45}, {"link_downed", 0}}, 0.25);
    t.add({{"symbol_error", 2}, {"link_downed", 1}}, 0.5);  // driver reload: counters start again
    const counter_values last{{"symbol_error", 60}, {"link_downed", 1}};
    t.add(last, 0.75);
    auto g = counter_delta(first, last, ib_counter_maximum);
    CHECK(g.delta("symbol_error") == 20u);  // what before and after alone say
    t.apply(g);
    CHECK_FALSE(g.delta("symbol_error"));
    CHECK(g.resets == std::vector<std::string>{"symbol_error"});
    CHECK(g.intervals.count("symbol_error") == 0);
    REQUIRE(g.intervals.count("link_downed"));
    CHECK(g.intervals.at("link_downed").first_at_s == doctest::Approx(0.5));
}

TEST_CASE("counter intervals: nothing before start; start again at the window's real start") {
    counter_interval_tracker t;
    t.add({{"rx_dropped", 5}}, 0.25);  // no start yet: ignored
    CHECK(t.intervals() == 0);
    t.start({{"rx_dropped", 5}});
    t.add({{"rx_dropped", 9}}, 0.25);
    t.start({{"rx_dropped", 9}});  // the warm-up ended: the window starts here
    t.add({{"rx_dropped", 9}}, 0.25);
    CHECK(t.intervals() == 1);
    auto g = counter_delta({{"rx_dropped", 9}}, {{"rx_dropped", 9}});
    t.apply(g);
    CHECK(g.intervals.empty());
}

TEST_CASE("counter intervals: a spread that does not fit its counter is insane; the JSON round trip keeps it") {
    const auto good = flapped_nic();
    const auto j = to_json(good);
    CHECK(j["intervals"] == 12);
    CHECK(j["nic"]["counters"]["intervals"]["carrier_changes"]["moved_in"] == 1);
    CHECK(j["nic"]["counters"]["intervals"]["rx_dropped"]["max_increase"] == 4);
    const auto back = link_side_counters_from_json(j);
    CHECK(back.intervals == 12);
    CHECK(back.source("nic")->group("counters").intervals.at("rx_dropped").first_at_s == doctest::Approx(1.25));
    CHECK_NOTHROW(check_sane(back));

    auto more_than_window = good;
    more_than_window.source("nic")->group("counters").intervals["rx_dropped"].intervals = 13;
    CHECK_THROWS_AS(check_sane(more_than_window), insane_figure);
    auto above_delta = good;
    above_delta.source("nic")->group("counters").intervals["rx_dropped"].max_increase = 6;
    CHECK_THROWS_AS(check_sane(above_delta), insane_figure);
    auto after_window = good;
    after_window.source("nic")->group("counters").intervals["carrier_changes"].first_at_s = 3.5;
    CHECK_THROWS_AS(check_sane(after_window), insane_figure);
    auto without_delta = good;
    without_delta.source("nic")->group("counters").intervals["rx_crc_errors"] = {1, 1, 0.5};  // rose, yet its delta is 0
    CHECK_THROWS_AS(check_sane(without_delta), insane_figure);
    auto absurd_count = good;
    absurd_count.intervals = 1'000'000;
    CHECK_THROWS_AS(check_sane(absurd_count), insane_figure);

    auto malformed = j;
    malformed["nic"]["counters"]["intervals"]["carrier_changes"] = {{"moved_in", -1}, {"max_increase", 2}, {"first_at_s", 1.0}};
    CHECK_THROWS_AS(link_side_counters_from_json(malformed), spec_error);
    malformed = j;
    // A counter is any sysfs file name: one with a '/' would leave the counters' folder.
    malformed["nic"]["counters"]["intervals"]["../carrier"] = {{"moved_in", 1}, {"max_increase", 2}, {"first_at_s", 1.0}};
    CHECK_THROWS_AS(link_side_counters_from_json(malformed), spec_error);
    malformed = j;
    malformed["nic"]["counters"]["intervals"] = "often";
    CHECK_THROWS_AS(link_side_counters_from_json(malformed), spec_error);
}

}  // namespace counter_intervals_test
