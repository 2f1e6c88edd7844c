// analysis/rail_planes: `matrix --rails` reads rail k of every host against rail k of the
// others: a plane slow on every host is named as the plane (its links set aside, no host
// suspect), one host's bad NIC as that host's rail; retests replace; figures by rate share
// or Gbit/s; the fractions checked. Also core::rail_readings, which feeds it.
#include "analysis/outliers.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/triage_verdict.hpp"
#include "core/error.hpp"
#include "core/rail_check.hpp"

#include <doctest/doctest.h>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rail_planes_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::analysis;

namespace {

/// Every directed link of n hosts over rails r0..r(R-1) (the same names on every host), each
/// rail's share of its rate from `share(from, to, rail)`; a rail is bad as the sibling rule
/// marks it: below 0.9 x the median of its link's rails.
rail_cells full_matrix(std::size_t n, std::size_t rails, const std::function<double(std::size_t, std::size_t, std::size_t)>& share) {
    rail_cells cells;
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            if (a == b) continue;
            std::vector<double> s;
            for (std::size_t k = 0; k < rails; ++k) s.push_back(share(a, b, k));
            std::vector<double> sorted = s;
            std::sort(sorted.begin(), sorted.end());
            const double median = rails % 2 ? sorted[rails / 2] : (sorted[rails / 2 - 1] + sorted[rails / 2]) / 2;
            std::vector<rail_observation> obs;
            for (std::size_t k = 0; k < rails; ++k) {
                const auto name = "r" + std::to_string(k);
                obs.push_back({name, name, s[k] * 200, s[k], s[k] < 0.9 * median});
            }
            cells.put(a, b, obs, false);
        }
    return cells;
}

}  // namespace

TEST_SUITE("rail_planes") {

TEST_CASE("a plane slow on every host is the plane's: no rail or host suspect, its links set aside") {
    const auto cells = full_matrix(4, 2, [](std::size_t, std::size_t, std::size_t k) { return k == 1 ? 0.48 : 0.95; });
    const auto v = judge_rail_planes(cells, 4, 0.9, 0.5);
    CHECK(v.by_rate);
    REQUIRE(v.planes.size() == 2);
    CHECK(v.planes[0].rail == "r0");
    CHECK_FALSE(v.planes[0].slow);
    CHECK(v.planes[1].rail == "r1");
    CHECK(v.planes[1].slow);
    CHECK(v.planes[1].endpoints == 4);
    CHECK(v.planes[1].links == 12);
    CHECK(v.planes[1].bad == 12);
    CHECK(*v.planes[1].figure == doctest::Approx(0.48));
    // Two planes: the reference is their mean, 0.715; 0.48 is 67% of it.
    CHECK(*v.planes[1].of_reference == doctest::Approx(0.48 / 0.715));
    CHECK(v.slow_planes() == std::vector<std::string>{"r1"});
    CHECK(v.suspects.empty());
    CHECK(v.explained.size() == 12);
    const std::vector<std::string> names{"h0:7470", "h1:7470", "h2:7470", "h3:7470"};
    const auto lines = describe(v, names);
    REQUIRE(lines.size() == 1);
    CAPTURE(lines[0]);
    CHECK(lines[0].find("rail plane r1 is slow on every host: its hosts' median 48% of its link rate, 67% of the planes' median") == 0);
    CHECK(lines[0].find("12 of its 12 links named bad for it") != std::string::npos);
    const auto j = to_json(v, names);
    CHECK(j["compared_by"] == "rate share");
    CHECK(j["planes"][1]["slow"] == true);
    CHECK(j["explained_links"] == 12);
}

TEST_CASE("one host's bad NIC is that host's rail, and its plane is not slow") {
    // h2's r0 at half rate, sending and receiving: its 6 links read r0 at half; the other
    // hosts' r0 endpoints meet it in 2 of their 6 links, so their medians stay at full rate.
    const auto cells = full_matrix(4, 2, [](std::size_t a, std::size_t b, std::size_t k) {
        return k == 0 && (a == 2 || b == 2) ? 0.47 : 0.95;
    });
    const auto v = judge_rail_planes(cells, 4, 0.9, 0.5);
    for (const auto& p : v.planes) {
        CAPTURE(p.rail);
        CHECK_FALSE(p.slow);
    }
    REQUIRE(v.suspects.size() == 1);
    CHECK(v.suspects[0].host == 2);
    CHECK(v.suspects[0].rail == "r0");
    CHECK(v.suspects[0].links == 6);
    CHECK(v.suspects[0].bad == 6);
    CHECK(*v.suspects[0].figure == doctest::Approx(0.47));
    CHECK(v.explained.empty());
    const std::vector<std::string> names{"a", "b", "c", "d"};
    const auto lines = describe(v, names);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "rail r0 of c is suspect: bad in 6 of its 6 links, median 47% of its link rate (its NIC, cable or switch port)");
}

TEST_CASE("a healthy matrix names nothing") {
    const auto cells = full_matrix(5, 3, [](std::size_t a, std::size_t b, std::size_t k) { return 0.9 + 0.01 * ((a + b + k) % 4); });
    const auto v = judge_rail_planes(cells, 5, 0.9, 0.5);
    CHECK(v.planes.size() == 3);
    CHECK(v.slow_planes().empty());
    CHECK(v.suspects.empty());
    CHECK(v.explained.empty());
    CHECK(describe(v, {}).empty());
}

TEST_CASE("a retest replaces a link's rails") {
    auto cells = full_matrix(4, 2, [](std::size_t a, std::size_t b, std::size_t k) {
        return k == 0 && (a == 2 || b == 2) ? 0.47 : 0.95;
    });
    // Every link of h2 measured again at full rate: h2's rail is no longer suspect.
    for (std::size_t o : {0, 1, 3})
        for (const auto& [a, b] : {std::pair<std::size_t, std::size_t>{2, o}, {o, 2}}) {
            const std::vector<rail_observation> good{{"r0", "r0", 190, 0.95, false}, {"r1", "r1", 190, 0.95, false}};
            cells.put(a, b, good, true);
        }
    CHECK(judge_rail_planes(cells, 4, 0.9, 0.5).suspects.empty());
}

TEST_CASE("without every rail's rate the planes are compared in Gbit/s") {
    rail_cells cells;
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b) {
            if (a == b) continue;
            const std::vector<rail_observation> obs{{"r0", "r0", 10, std::nullopt, false}, {"r1", "r1", 4, std::nullopt, true}};
            cells.put(a, b, obs, false);
        }
    const auto v = judge_rail_planes(cells, 4, 0.9, 0.5);
    CHECK_FALSE(v.by_rate);
    CHECK(*v.reference == doctest::Approx(7));
    CHECK(v.slow_planes() == std::vector<std::string>{"r1"});
    CHECK(to_json(v, {})["compared_by"] == "gbit_per_s");
    CHECK(describe(v, {})[0].find("its hosts' median 4.00 Gbit/s") != std::string::npos);
}

TEST_CASE("a failed rail reads as moving nothing, and one plane alone is never slow") {
    rail_cells cells;
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            if (a != b) {
                const std::vector<rail_observation> obs{{"r0", "r0", a == 1 ? 0.0 : 9.0, std::nullopt, a == 1}};
                cells.put(a, b, obs, false);
            }
    const auto v = judge_rail_planes(cells, 4, 0.9, 0.5);
    CHECK_FALSE(v.reference);
    CHECK(v.slow_planes().empty());
    // h1 sent nothing on r0 in its 3 links and received fine in 3: 3 of 6 is not more than half.
    CHECK(v.suspects.empty());
    CHECK(judge_rail_planes(cells, 4, 0.9, 0.4).suspects.size() == 1);
}

TEST_CASE("the fractions are checked") {
    const rail_cells cells;
    CHECK_THROWS_AS(judge_rail_planes(cells, 4, 0, 0.5), core::spec_error);
    CHECK_THROWS_AS(judge_rail_planes(cells, 4, 1.5, 0.5), core::spec_error);
    CHECK_THROWS_AS(judge_rail_planes(cells, 4, 0.9, 1), core::spec_error);
    CHECK(judge_rail_planes(cells, 4, 0.9, 0.5).planes.empty());
}

TEST_CASE("links a slow plane explains count for no suspect host, and their cause is the plane") {
    // Every link bad for its rails alone (as the sibling rule marks a slow plane).
    std::vector<link_sample> links;
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            if (a != b) {
                link_sample l;
                l.from = a;
                l.to = b;
                l.gbit_per_s = 0.28;
                l.rail_problems = {"r1 slow"};
                links.push_back(l);
            }
    const auto a = analyze_matrix(4, links);
    CHECK(a.suspects.size() == 4);  // without the planes' verdict every host reads suspect
    std::vector<link_cause> aside(a.links.size(), link_cause::rail_plane);
    const auto g = judge_without_groups(a, aside);
    CHECK(g.suspects.empty());
    for (auto c : g.cause) CHECK(c == link_cause::rail_plane);
    CHECK(std::string(to_string(link_cause::rail_plane)) == "rail plane");
    CHECK(std::string(to_string(link_cause::rail_uplink)) == "rail uplink");
    // The cause is what the rails said: a rail uplink's links are the uplink's.
    aside[1] = link_cause::rail_uplink;
    CHECK(judge_without_groups(a, aside).cause[1] == link_cause::rail_uplink);
    aside[1] = link_cause::rail_plane;
    const std::vector<std::size_t> group_of{0, 0, 1, 1};
    const auto grouped = judge_groups(a, group_of, 2, aside);
    CHECK(grouped.suspects.empty());
    for (const auto& u : grouped.uplinks) CHECK_FALSE(u.bad);
    // A link set aside still counts as measured: one link of host 1 bad for another reason is
    // 1 of its 6, not 1 of 1, and names no host.
    std::vector<link_cause> all_but_one = aside;
    all_but_one[0] = link_cause::none;  // 0 -> 1
    CHECK(judge_without_groups(a, all_but_one).suspects.empty());
    CHECK(judge_groups(a, group_of, 2, all_but_one).suspects.empty());
    CHECK(judge_without_groups(a, all_but_one).cause[0] == link_cause::none);
}

/// 16 hosts in 4 groups of 4 (host h in group h / 4), named leaf0..leaf3.
std::size_t leaf_of(std::size_t h) { return h / 4; }
const std::vector<std::size_t> leaves{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
const std::vector<std::string> leaf_names{"leaf0", "leaf1", "leaf2", "leaf3"};

TEST_CASE("a leaf's slow uplink on one rail is that rail uplink: not the plane, not its hosts' NICs") {
    // leaf2's r1 ports towards the r1 spine at 45%: every r1 reading that leaves or enters
    // leaf2 is slow; r1 within leaf2, and every r0 reading, at full rate.
    const auto cells = full_matrix(16, 2, [](std::size_t a, std::size_t b, std::size_t k) {
        return k == 1 && leaf_of(a) != leaf_of(b) && (leaf_of(a) == 2 || leaf_of(b) == 2) ? 0.45 : 0.95;
    });
    // Without the groups its four hosts' r1 read suspect (24 of their 30 readings bad).
    const auto flat = judge_rail_planes(cells, 16, 0.9, 0.5);
    CHECK(flat.suspects.size() == 4);
    CHECK(flat.uplinks.empty());

    const auto v = judge_rail_planes(cells, 16, 0.9, 0.5, leaves, 4);
    REQUIRE(v.uplinks.size() == 1);
    CHECK(v.uplinks[0].rail == "r1");
    CHECK(v.uplinks[0].group == 2);
    CHECK(v.uplinks[0].cross_links == 96);  // 4 hosts x 12 peers, both ways
    CHECK(v.uplinks[0].cross_bad == 96);
    CHECK(v.uplinks[0].in_group_links == 12);
    CHECK(v.uplinks[0].in_group_bad == 0);
    CHECK(v.slow_planes().empty());
    CHECK(v.suspects.empty());
    // The readings set aside leave the figures: every endpoint's median is full rate.
    for (const auto& p : v.planes) CHECK(*p.figure == doctest::Approx(0.95));
    CHECK(v.planes[1].bad == 0);
    REQUIRE(v.explained.size() == 96);
    for (const auto& e : v.explained) {
        CHECK((leaf_of(e.from) == 2) != (leaf_of(e.to) == 2));
        CHECK(e.by == rail_explanation::uplink);
    }
    CHECK(v.explanation(8, 0) == rail_explanation::uplink);
    CHECK(v.explanation(0, 8) == rail_explanation::uplink);
    CHECK(v.explanation(0, 1) == rail_explanation::none);
    CHECK(v.explanation(0, 4) == rail_explanation::none);
    const auto lines = describe(v, {}, leaf_names);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "rail r1's uplink of leaf2 is slow: bad in 96 of its 96 cross-group readings on r1, in-group 0 of 12 "
                      "(the leaf's ports towards that plane's spine, not its hosts' NICs)");
    const auto j = to_json(v, {}, leaf_names);
    REQUIRE(j["uplinks"].size() == 1);
    CHECK(j["uplinks"][0]["rail"] == "r1");
    CHECK(j["uplinks"][0]["group"] == "leaf2");
    CHECK(j["uplinks"][0]["cross_bad"] == 96);
    CHECK(j["explained_links"] == 96);
}

TEST_CASE("a plane slow between every pair of leaves is its spine: the plane, no uplink") {
    const auto cells = full_matrix(16, 2, [](std::size_t a, std::size_t b, std::size_t k) {
        return k == 1 && leaf_of(a) != leaf_of(b) ? 0.45 : 0.95;
    });
    const auto v = judge_rail_planes(cells, 16, 0.9, 0.5, leaves, 4);
    CHECK(v.uplinks.empty());
    CHECK(v.slow_planes() == std::vector<std::string>{"r1"});
    CHECK(v.suspects.empty());
    CHECK(v.explained.size() == 192);  // every cross-leaf link
    for (const auto& e : v.explained) CHECK(e.by == rail_explanation::plane);
}

TEST_CASE("with two leaves a slow uplink cannot be told from the other's or the spine: the plane") {
    const std::vector<std::size_t> two{0, 0, 0, 0, 1, 1, 1, 1};
    const auto cells = full_matrix(8, 2, [&](std::size_t a, std::size_t b, std::size_t k) {
        return k == 1 && two[a] != two[b] ? 0.45 : 0.95;
    });
    const auto v = judge_rail_planes(cells, 8, 0.9, 0.5, two, 2);
    CHECK(v.uplinks.empty());
    CHECK(v.slow_planes() == std::vector<std::string>{"r1"});
}

TEST_CASE("a NIC's own fault is its rail's, with groups too: no uplink named for it") {
    // h5's r0 (leaf1) at half rate in all its links, in-group ones included.
    const auto cells = full_matrix(16, 2, [](std::size_t a, std::size_t b, std::size_t k) {
        return k == 0 && (a == 5 || b == 5) ? 0.47 : 0.95;
    });
    const auto v = judge_rail_planes(cells, 16, 0.9, 0.5, leaves, 4);
    CHECK(v.uplinks.empty());
    CHECK(v.slow_planes().empty());
    REQUIRE(v.suspects.size() == 1);
    CHECK(v.suspects[0].host == 5);
    CHECK(v.suspects[0].rail == "r0");
    CHECK(v.explained.empty());
}

TEST_CASE("the groups are checked") {
    const auto cells = full_matrix(4, 2, [](std::size_t, std::size_t, std::size_t) { return 0.95; });
    const std::vector<std::size_t> three{0, 0, 1};
    CHECK_THROWS_AS(judge_rail_planes(cells, 4, 0.9, 0.5, three, 2), core::spec_error);
    const std::vector<std::size_t> out_of_range{0, 0, 1, 2};
    CHECK_THROWS_AS(judge_rail_planes(cells, 4, 0.9, 0.5, out_of_range, 2), core::spec_error);
    const std::vector<std::size_t> fine{0, 0, 1, 1};
    CHECK(judge_rail_planes(cells, 4, 0.9, 0.5, fine, 2).uplinks.empty());
}

}  // TEST_SUITE

TEST_CASE("rail_readings keeps each rail's largest bandwidth point, bidir only without one") {
    core::run_result run;
    run.spec.rails = {{"ra0", "rb0", "10.0.0.1", "10.0.0.2", 0.2}, {"ra1", "rb1", "10.0.1.1", "10.0.1.2", 0.2}};
    auto point = [&](core::test_kind test, std::uint64_t size, double g0, double g1, bool fail1) {
        core::point_result p;
        p.test = test;
        p.size_bytes = size;
        p.flows.resize(1);
        core::rail_figures r0, r1;
        r0.name = "ra0";
        r0.gbit_per_s = g0;
        r0.rate_fraction = g0 / 0.2;
        r1.name = "ra1";
        r1.gbit_per_s = fail1 ? 0 : g1;
        r1.failed = fail1;
        p.rails = {r0, r1};
        run.points.push_back(p);
    };
    point(core::test_kind::bidir, 1 << 22, 0.3, 0.3, false);
    point(core::test_kind::bandwidth, 1 << 16, 0.1, 0.1, false);
    point(core::test_kind::bandwidth, 1 << 20, 0.19, 0.0, true);
    point(core::test_kind::latency, 8, 0, 0, false);
    const std::vector runs{run};
    const auto r = core::rail_readings(runs);
    REQUIRE(r.size() == 2);
    CHECK(r[0].name == "ra0");
    CHECK(r[0].peer_name == "rb0");
    CHECK(r[0].gbit_per_s == doctest::Approx(0.19));
    CHECK(*r[0].rate_fraction == doctest::Approx(0.95));
    CHECK_FALSE(r[0].failed);
    CHECK(r[1].name == "ra1");
    CHECK(r[1].failed);
    CHECK(r[1].gbit_per_s == 0);
    CHECK_FALSE(r[1].rate_fraction);
}

}  // namespace rail_planes_test
