#include "core/error.hpp"
#include "analysis/matrix_schedule.hpp"
#include "analysis/outliers.hpp"

#include <cmath>
#include <cstdint>
#include <doctest/doctest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace outliers_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using namespace meshperf::analysis;

namespace {

link_sample measured(std::size_t from, std::size_t to, double gbit, double lat_us) {
    link_sample l;
    l.from = from;
    l.to = to;
    l.gbit_per_s = gbit;
    l.lat_us = lat_us;
    return l;
}

link_sample failed(std::size_t from, std::size_t to, std::string error = "connection refused") {
    link_sample l;
    l.from = from;
    l.to = to;
    l.reachable = false;
    l.error = std::move(error);
    return l;
}

// Deterministic noise in [-1, 1): mt19937's output is fixed by the standard, the
// distributions of <random> are not.
struct noise {
    std::mt19937 gen{12345};
    double operator()() { return static_cast<double>(gen()) / 2147483648.0 - 1.0; }
};

// Every directed link of n hosts, figures from f(from, to).
template <typename F>
std::vector<link_sample> full_matrix(std::size_t n, F f) {
    std::vector<link_sample> links;
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b)
            if (a != b) links.push_back(f(a, b));
    return links;
}

bool touches(const link_sample& l, std::size_t h) { return l.from == h || l.to == h; }

// The 6-host case of the netns test: host `slow` is limited to a quarter of the others.
std::vector<link_sample> six_hosts_one_slow(std::size_t slow) {
    noise jitter;
    return full_matrix(6, [&](std::size_t a, std::size_t b) {
        const double bw = 9.41 * (1 + 0.02 * jitter());
        const double lat = 23.1 * (1 + 0.1 * jitter());
        return measured(a, b, (a == slow || b == slow) ? bw / 4 : bw, lat);
    });
}

}  // namespace

TEST_SUITE("outliers") {

TEST_CASE("robust_summary: median and MAD") {
    CHECK_FALSE(robust_summary({}).has_value());
    const std::vector<double> five{3, 1, 100, 2, 4};
    const auto s = robust_summary(five);
    REQUIRE(s);
    CHECK(s->count == 5);
    CHECK(s->median == 3);
    CHECK(s->mad == 1);  // deviations 0, 1, 1, 2, 97
    const std::vector<double> two{10, 4};
    const auto t = robust_summary(two);
    CHECK(t->median == 7);  // even count: mean of the middle two
    CHECK(t->mad == 3);
    const std::vector<double> one{5};
    CHECK(robust_summary(one)->mad == 0);
}

TEST_CASE("one host at a quarter: all its links bad, it alone suspect, nothing else") {
    const std::size_t slow = 3;
    const auto links = six_hosts_one_slow(slow);
    REQUIRE(links.size() == 30);
    const auto a = analyze_matrix(6, links);
    REQUIRE(a.bandwidth);
    CHECK(a.bandwidth->median == doctest::Approx(9.41).epsilon(0.03));
    std::size_t bad = 0;
    for (const auto& v : a.links) {
        CAPTURE(v.link.from);
        CAPTURE(v.link.to);
        CHECK(v.bad == touches(v.link, slow));
        if (v.bad) {
            ++bad;
            CHECK(v.reason.find("bandwidth") == 0);
            CHECK(v.reason.find("< 0.9 x median") != std::string::npos);
            CHECK(v.reason.find("latency") == std::string::npos);
            CHECK(*v.bandwidth_ratio == doctest::Approx(0.25).epsilon(0.05));
        } else {
            CHECK(v.reason.empty());
        }
    }
    CHECK(bad == 10);
    CHECK(a.suspects == std::vector<std::size_t>{slow});
    CHECK(a.unreachable.empty());
    CHECK(a.hosts[slow].measured == 10);
    CHECK(a.hosts[slow].bad == 10);
    for (std::size_t h = 0; h < 6; ++h)
        if (h != slow) {
            CHECK(a.hosts[h].measured == 10);
            CHECK(a.hosts[h].bad == 2);
            CHECK_FALSE(a.hosts[h].suspect);
        }
}

TEST_CASE("noisy but healthy data flags nothing") {
    noise jitter;
    const auto links = full_matrix(16, [&](std::size_t a, std::size_t b) {
        return measured(a, b, 98.0 * (1 + 0.08 * jitter()), 4.2 * (1 + 0.4 * jitter()));
    });
    const auto a = analyze_matrix(16, links);
    for (const auto& v : a.links) CHECK_FALSE(v.bad);
    CHECK(a.suspects.empty());
    CHECK(a.unreachable.empty());
    CHECK(links_to_retest(a).empty());
    REQUIRE(a.latency);
    CHECK(a.latency->mad > 0);
}

TEST_CASE("a uniformly slow fabric flags nothing: the rules are relative") {
    const auto links = full_matrix(8, [](std::size_t a, std::size_t b) { return measured(a, b, 2.0, 900.0); });
    const auto a = analyze_matrix(8, links);
    for (const auto& v : a.links) CHECK_FALSE(v.bad);
}

TEST_CASE("thresholds are strict: exactly at the limit is healthy") {
    outlier_options o;
    o.bandwidth_fraction = 0.5;
    o.latency_multiple = 2.0;
    std::vector<link_sample> links = full_matrix(4, [](std::size_t a, std::size_t b) { return measured(a, b, 10, 10); });
    links[0].gbit_per_s = 5.0;  // exactly 0.5 x median 10
    links[1].lat_us = 20.0;     // exactly 2 x median 10
    links[2].gbit_per_s = 4.999;
    links[3].lat_us = 20.001;
    const auto a = analyze_matrix(4, links, o);
    CHECK_FALSE(a.links[0].bad);
    CHECK_FALSE(a.links[1].bad);
    CHECK(a.links[2].bad);
    CHECK(a.links[2].reason == "bandwidth 5.00 Gbit/s < 0.5 x better-half median 10.0 Gbit/s (50% of better-half median)");
    CHECK(a.links[3].bad);
    CHECK(a.links[3].reason == "latency 20.0 us > 2 x better-half median 10.0 us (2.00 x better-half median)");
}

TEST_CASE("both rules broken: reasons joined") {
    std::vector<link_sample> links = full_matrix(5, [](std::size_t a, std::size_t b) { return measured(a, b, 100, 3); });
    links[5].gbit_per_s = 40;
    links[5].lat_us = 12;
    const auto a = analyze_matrix(5, links);
    CHECK(a.links[5].reason ==
          "bandwidth 40.0 Gbit/s < 0.9 x median 100 Gbit/s (40% of median); latency 12.0 us > 2 x median 3.00 us (4.00 x median)");
}

TEST_CASE("a fast link whose counters moved is bad for errors, its reason names them, and its hosts count it") {
    std::vector<link_sample> links = full_matrix(6, [](std::size_t a, std::size_t b) { return measured(a, b, 100, 3); });
    // Host 2's every link carried errors: it is suspect; one more link elsewhere is bad alone.
    for (auto& l : links)
        if (touches(l, 2)) l.counter_problems = {"peer eth0: 37 rx_crc_errors (frames with a bad checksum) at 1 MiB bandwidth"};
    links[0].counter_problems = {"TCP retransmits: 60 of 1000 segments retransmitted (6.00%, above 5%) at 1 MiB bandwidth"};
    const auto a = analyze_matrix(6, links);
    CHECK(a.links[0].bad);
    CHECK(a.links[0].counters_bad);
    CHECK_FALSE(a.links[0].bandwidth_bad);
    CHECK(a.links[0].reason == "counters: TCP retransmits: 60 of 1000 segments retransmitted (6.00%, above 5%) at 1 MiB bandwidth");
    CHECK(a.suspects == std::vector<std::size_t>{2});
    CHECK(a.hosts[2].bad == a.hosts[2].measured);
    const auto j = to_json(a.links[0]);
    CHECK(j["counters_bad"] == true);
    CHECK(j["counter_problems"].size() == 1);
    CHECK(to_json(a.links[1])["counters_bad"] == true);   // 0 -> 2
    CHECK(to_json(a.links[2])["counters_bad"] == false);  // 0 -> 3: clean
}

TEST_CASE("a link with a rail below its rate is bad for its rails whatever its aggregate figure") {
    std::vector<link_sample> links = full_matrix(6, [](std::size_t a, std::size_t b) { return measured(a, b, 100, 3); });
    links[3].rail_problems = {"h0 rail ra2 -> h4 rail rb2: 4.5 Gbit/s at 1 MiB, below 0.9 x link rate 10 = 9 Gbit/s (45% of the link)"};
    const auto a = analyze_matrix(6, links);
    CHECK(a.links[3].bad);
    CHECK(a.links[3].rails_bad);
    CHECK_FALSE(a.links[3].bandwidth_bad);
    CHECK_FALSE(a.links[3].counters_bad);
    CHECK(a.links[3].reason == "rail: " + links[3].rail_problems[0]);
    CHECK_FALSE(a.links[2].bad);
    const auto j = to_json(a.links[3]);
    CHECK(j["rails_bad"] == true);
    CHECK(j["rail_problems"].size() == 1);
    CHECK(to_json(a.links[2])["rails_bad"] == false);
    CHECK(links_to_retest(a) == std::vector<std::size_t>{3});
}

TEST_CASE("three hosts, one slow: judged against the better half, so its links are bad (issue 26)") {
    // Host 2 slow: 4 of the 6 links touch it. Median of {10, 10, 1, 1, 1, 1} is 1, the slow
    // figure: judged against the median nothing was bad ("bad links: none").
    const auto links = full_matrix(3, [](std::size_t a, std::size_t b) {
        return measured(a, b, (a == 2 || b == 2) ? 1.0 : 10.0, (a == 2 || b == 2) ? 50.0 : 5.0);
    });
    const auto a = analyze_matrix(3, links);
    CHECK(a.bandwidth->median == 1.0);
    CHECK(a.reference_rule == "better-half median");
    CHECK(a.bandwidth_reference == 10.0);  // the faster half {10, 10, 1}
    CHECK(a.latency_reference == 5.0);     // the quicker half {5, 5, 50}
    for (const auto& v : a.links) {
        CAPTURE(v.link.from);
        CAPTURE(v.link.to);
        CHECK(v.bad == touches(v.link, 2));
        CHECK(v.bandwidth_bad == touches(v.link, 2));
        CHECK(v.latency_bad == touches(v.link, 2));
    }
    CHECK(a.links[1].reason == "bandwidth 1.00 Gbit/s < 0.9 x better-half median 10.0 Gbit/s (10% of better-half median); "
                               "latency 50.0 us > 2 x better-half median 5.00 us (10.0 x better-half median)");
    CHECK(a.suspects == std::vector<std::size_t>{2});  // hosts 0 and 1: 2 of 4 bad, exactly half, not suspect
    const auto j = to_json(a);
    CHECK(j["reference"]["rule"] == "better-half median");
    CHECK(j["reference"]["gbit_per_s"] == 10.0);
    CHECK(j["links"][1]["bandwidth_bad"] == true);
}

TEST_CASE("each rule of a link is told apart: a slow link is not latency-bad") {
    auto links = six_hosts_one_slow(3);
    const auto a = analyze_matrix(6, links);
    CHECK(a.reference_rule == "median");
    for (const auto& v : a.links) {
        CHECK(v.bandwidth_bad == touches(v.link, 3));
        CHECK_FALSE(v.latency_bad);
    }
    // judge_link on other figures against the same references: a retest's first figures.
    link_sample fast_but_late = measured(0, 1, 9.4, 100);
    const auto v = judge_link(fast_but_late, a);
    CHECK(v.latency_bad);
    CHECK_FALSE(v.bandwidth_bad);
}

TEST_CASE("suspect needs more than half: exactly half is not suspect") {

    // Four hosts, host 3 slow: 6 of 12 links slow, median between 10 and 1 -> 5.5.
    const auto four = full_matrix(4, [](std::size_t x, std::size_t y) {
        return measured(x, y, (x == 3 || y == 3) ? 1.0 : 10.0, 5.0);
    });
    const auto b = analyze_matrix(4, four);
    CHECK(b.bandwidth->median == 5.5);
    CHECK(b.suspects == std::vector<std::size_t>{3});
    CHECK(b.hosts[0].bad * 2 < b.hosts[0].measured);

    // Tie at exactly half: host 0 with 1 of 2 measured links bad.
    std::vector<link_sample> two{measured(0, 1, 10, 5), measured(1, 0, 4, 5)};
    const auto c = analyze_matrix(2, two);
    CHECK(c.bandwidth->median == 7);
    CHECK_FALSE(c.links[0].bad);
    CHECK(c.links[1].bad);
    CHECK(c.hosts[0].bad == 1);
    CHECK(c.hosts[0].measured == 2);
    CHECK(c.suspects.empty());
}

TEST_CASE("edge cases: no hosts, no links, one link, links without figures") {
    const auto none = analyze_matrix(0, {});
    CHECK(none.links.empty());
    CHECK_FALSE(none.bandwidth);
    CHECK_FALSE(none.latency);
    CHECK(none.suspects.empty());

    const auto empty = analyze_matrix(5, {});
    CHECK(empty.hosts.size() == 5);
    CHECK(empty.suspects.empty());
    CHECK(empty.unreachable.empty());

    const std::vector<link_sample> one{measured(0, 1, 9.4, 20)};
    const auto single = analyze_matrix(2, one);
    CHECK_FALSE(single.links[0].bad);
    CHECK(single.bandwidth->median == 9.4);
    CHECK(single.bandwidth->mad == 0);
    CHECK(single.suspects.empty());

    link_sample latency_only;
    latency_only.from = 0;
    latency_only.to = 1;
    latency_only.lat_us = 100;
    link_sample nothing;
    nothing.from = 1;
    nothing.to = 0;
    const std::vector<link_sample> partial{latency_only, nothing, measured(0, 2, 10, 10), measured(2, 0, 10, 10)};
    const auto p = analyze_matrix(3, partial);
    CHECK(p.latency->median == 10);
    CHECK(p.bandwidth->count == 2);
    CHECK(p.links[0].bad);
    CHECK_FALSE(p.links[0].bandwidth_ratio);
    CHECK_FALSE(p.links[1].bad);
    CHECK(p.hosts[1].measured == 1);  // the link without figures is not counted
}

TEST_CASE("a host down from the start is unreachable, not suspect; the rest is judged") {
    const auto links = full_matrix(6, [](std::size_t a, std::size_t b) {
        return (a == 5 || b == 5) ? failed(a, b) : measured(a, b, 9.4, 20);
    });
    const auto a = analyze_matrix(6, links);
    CHECK(a.unreachable == std::vector<std::size_t>{5});
    CHECK(a.suspects.empty());
    CHECK(a.bandwidth->count == 20);
    for (const auto& v : a.links) {
        CHECK(v.bad == touches(v.link, 5));
        if (v.bad) CHECK(v.reason == "unreachable: connection refused");
    }
    CHECK(a.hosts[5].unreachable == 10);
    CHECK(a.hosts[5].measured == 0);
    CHECK(links_to_retest(a).empty());
}

TEST_CASE("a host killed during the matrix: only it is named unreachable") {
    const std::size_t n = 6, dead = 2, died_at_round = 2;
    std::vector<link_sample> links;
    for (std::size_t r = 0; r < round_count(n); ++r)
        for (const host_pair& p : schedule_round(n, r))
            for (const directed_link& d : measurement_order(p))
                links.push_back(r >= died_at_round && touches(link_sample{d.from, d.to}, dead)
                                    ? failed(d.from, d.to, "peer closed the session")
                                    : measured(d.from, d.to, 9.4, 20));
    const auto a = analyze_matrix(n, links);
    CHECK(a.unreachable == std::vector<std::size_t>{dead});
    CHECK(a.suspects.empty());
    CHECK(a.hosts[dead].unreachable == 6);  // rounds 2, 3, 4: one pair each, both directions
}

TEST_CASE("unreachable attribution: ambiguous cases name no one; caller's word counts") {
    // One pair that cannot talk: a link problem, no host named.
    std::vector<link_sample> links = full_matrix(4, [](std::size_t a, std::size_t b) {
        return ((a == 0 && b == 1) || (a == 1 && b == 0)) ? failed(a, b) : measured(a, b, 10, 5);
    });
    auto a = analyze_matrix(4, links);
    CHECK(a.unreachable.empty());
    CHECK(a.links[0].bad);
    // The caller knows host 1's daemon is down.
    const std::vector<std::size_t> down{1};
    a = analyze_matrix(4, links, {}, down);
    CHECK(a.unreachable == std::vector<std::size_t>{1});

    // Two hosts, the only pair failed: undecidable from links alone.
    const std::vector<link_sample> two{failed(0, 1), failed(1, 0)};
    CHECK(analyze_matrix(2, two).unreachable.empty());
    const std::vector<std::size_t> down0{0};
    CHECK(analyze_matrix(2, two, {}, down0).unreachable == std::vector<std::size_t>{0});
}

TEST_CASE("unreachable attribution: two dead hosts, and a peer of both") {
    // Hosts 0 and 1 dead from the start among 8: both named, their peers not.
    auto links = full_matrix(8, [](std::size_t a, std::size_t b) {
        return (a <= 1 || b <= 1) ? failed(a, b) : measured(a, b, 10, 5);
    });
    CHECK(analyze_matrix(8, links).unreachable == std::vector<std::size_t>{0, 1});

    // Host 0 dead from the start; host 7 died in its last pair, with host 2 only. Host 2
    // failed with two peers (0 and 7) but is not to blame; 7 cannot be told from 2.
    links = full_matrix(8, [](std::size_t a, std::size_t b) {
        const bool with7 = (a == 7 && b == 2) || (a == 2 && b == 7);
        return (a == 0 || b == 0 || with7) ? failed(a, b) : measured(a, b, 10, 5);
    });
    const auto a = analyze_matrix(8, links);
    CHECK(a.unreachable == std::vector<std::size_t>{0});
}

TEST_CASE("retest: bad pairs rescheduled, good figures clear them") {
    const std::size_t slow = 1;
    auto links = six_hosts_one_slow(slow);
    const auto first = analyze_matrix(6, links);
    CHECK(links_to_retest(first).size() == 10);
    const auto pairs = pairs_to_retest(first);
    CHECK(pairs.size() == 5);
    for (const host_pair& p : pairs) CHECK((p.a == slow || p.b == slow));
    CHECK(schedule_pairs(pairs).size() == 5);  // all share the slow host
    // The retest finds the link healthy again (a transient): replace and judge again.
    for (std::size_t i : links_to_retest(first)) links[i].gbit_per_s = 9.4;
    const auto second = analyze_matrix(6, links);
    CHECK(links_to_retest(second).empty());
    CHECK(second.suspects.empty());
}

TEST_CASE("bad input is refused with spec_error") {
    std::vector<link_sample> self{measured(1, 1, 10, 5)};
    CHECK_THROWS_AS(analyze_matrix(2, self), spec_error);
    std::vector<link_sample> outside{measured(0, 2, 10, 5)};
    CHECK_THROWS_AS(analyze_matrix(2, outside), spec_error);
    std::vector<link_sample> dup{measured(0, 1, 10, 5), measured(0, 1, 9, 5)};
    CHECK_THROWS_AS(analyze_matrix(2, dup), spec_error);
    for (double v : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
        std::vector<link_sample> insane{measured(0, 1, v, 5)};
        CHECK_THROWS_AS(analyze_matrix(2, insane), spec_error);
        insane[0] = measured(0, 1, 5, v);
        CHECK_THROWS_AS(analyze_matrix(2, insane), spec_error);
    }
    const std::vector<std::size_t> down{7};
    CHECK_THROWS_AS(analyze_matrix(2, {}, {}, down), spec_error);

    outlier_options o;
    CHECK_NOTHROW(validate(o));
    o.bandwidth_fraction = 0;
    CHECK_THROWS_AS(validate(o), spec_error);
    o.bandwidth_fraction = 1.1;
    CHECK_THROWS_AS(validate(o), spec_error);
    o = {};
    o.latency_multiple = 0.5;
    CHECK_THROWS_AS(validate(o), spec_error);
    o = {};
    o.suspect_fraction = 1;
    CHECK_THROWS_AS(validate(o), spec_error);
    o.suspect_fraction = std::nan("");
    CHECK_THROWS_AS(analyze_matrix(2, {}, o), spec_error);
}

TEST_CASE("JSON: links with figures, bad and reason; suspects by address") {
    const std::vector<std::string> names{"n0:7470", "n1:7470", "n2:7470", "n3:7470", "n4:7470", "n5:7470"};
    auto links = six_hosts_one_slow(4);
    links.back() = failed(links.back().from, links.back().to, "timed out");
    const auto a = analyze_matrix(6, links);
    const auto j = to_json(a, names);
    CHECK(j["host_count"] == 6);
    CHECK(j["options"]["bandwidth_fraction"] == 0.9);
    CHECK(j["median"]["gbit_per_s"].is_number());
    CHECK(j["mad"]["lat_us"].is_number());
    REQUIRE(j["links"].size() == 30);
    const auto& first = j["links"][0];
    CHECK(first["from"] == "n0:7470");
    CHECK(first["to"] == "n1:7470");
    CHECK(first["reachable"] == true);
    CHECK(first["gbit_per_s"].is_number());
    CHECK(first["lat_us"].is_number());
    CHECK(first["bad"] == false);
    CHECK(first["reason"] == "");
    const auto& last = j["links"][29];
    CHECK(last["reachable"] == false);
    CHECK(last["gbit_per_s"].is_null());
    CHECK(last["bandwidth_ratio"].is_null());
    CHECK(last["bad"] == true);
    CHECK(last["reason"] == "unreachable: timed out");
    CHECK(last["error"] == "timed out");
    CHECK(j["suspects"] == nlohmann::json::array({"n4:7470"}));
    CHECK(j["unreachable"] == nlohmann::json::array());
    CHECK(j["hosts"][4]["suspect"] == true);
    CHECK(j["hosts"][4]["host"] == "n4:7470");

    const auto by_index = to_json(a);
    CHECK(by_index["suspects"] == nlohmann::json::array({4}));
    CHECK(by_index["links"][0]["from"] == 0);

    const std::vector<std::string> too_few{"a", "b"};
    CHECK_THROWS_AS(to_json(a, too_few), spec_error);
    const auto none = to_json(analyze_matrix(0, {}));
    CHECK(none["median"]["gbit_per_s"].is_null());
    CHECK(none["links"].is_array());
    CHECK(none["suspects"].is_array());
}

}  // TEST_SUITE

}  // namespace outliers_test
