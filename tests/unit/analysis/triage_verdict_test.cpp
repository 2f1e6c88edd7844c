#include "analysis/triage_verdict.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace triage_verdict_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::analysis;

namespace {

/// A simulated fabric: leaves of `leaf` hosts, every link at 1 Gbit/s but for a slow host
/// (a quarter both ways), a slow directed link (a quarter) and a slow leaf uplink (half,
/// for every link into or out of that leaf).
struct fabric {
    std::size_t hosts = 64, leaf = 8;
    std::size_t slow_host = 19, slow_from = 41, slow_to = 44, slow_leaf = 6;
    std::vector<std::size_t> group_of() const {
        std::vector<std::size_t> g(hosts);
        for (std::size_t h = 0; h < hosts; ++h) g[h] = h / leaf;
        return g;
    }
    double rate(std::size_t from, std::size_t to) const {
        double r = 1.0;
        if (from == slow_host || to == slow_host) r = 0.25;
        if (from == slow_from && to == slow_to) r = 0.25;
        const bool cross = from / leaf != to / leaf;
        if (cross && (from / leaf == slow_leaf || to / leaf == slow_leaf)) r = std::min(r, 0.5);
        // A little spread, the same on every run.
        return r * (1.0 - 0.002 * static_cast<double>((from * 7 + to * 3) % 5));
    }
};

/// Measures links into `samples` (a retest replaces the earlier figure).
void measure(const fabric& f, const std::vector<directed_link>& links, std::map<std::pair<std::size_t, std::size_t>, link_sample>& samples) {
    for (const auto& l : links) {
        link_sample s;
        s.from = l.from;
        s.to = l.to;
        s.gbit_per_s = f.rate(l.from, l.to);
        samples[{l.from, l.to}] = s;
    }
}

matrix_analysis judge(const fabric& f, const std::map<std::pair<std::size_t, std::size_t>, link_sample>& samples) {
    std::vector<link_sample> v;
    for (const auto& [k, s] : samples) v.push_back(s);
    return analyze_matrix(f.hosts, v);
}

/// The triage: shift rounds, verdict, localisation, verdict. Returns the final verdict.
struct outcome {
    matrix_analysis a;
    group_verdict v;
    std::size_t localisation_rounds = 0;
};
outcome triage(const fabric& f) {
    const auto groups = f.group_of();
    std::map<std::pair<std::size_t, std::size_t>, link_sample> samples;
    for (const auto& r : triage_schedule(f.hosts, groups)) measure(f, r.links, samples);
    auto a = judge(f, samples);
    auto v = judge_groups(a, groups, f.hosts / f.leaf);
    const auto more = localisation_links(localisation_request(a, v, groups));
    measure(f, more, samples);
    outcome o;
    o.localisation_rounds = triage_waves(f.hosts, more).size();
    o.a = judge(f, samples);
    o.v = judge_groups(o.a, groups, f.hosts / f.leaf);
    return o;
}

/// What the verdict says: named uplinks, suspects, and the bad links nothing explains.
void check_names(const fabric& f, const outcome& o) {
    std::vector<std::size_t> bad_uplinks;
    for (const auto& u : o.v.uplinks)
        if (u.bad) bad_uplinks.push_back(u.group);
    CHECK(bad_uplinks == std::vector<std::size_t>{f.slow_leaf});
    CHECK(o.v.suspects == std::vector<std::size_t>{f.slow_host});
    std::vector<directed_link> unexplained;
    for (std::size_t i = 0; i < o.a.links.size(); ++i)
        if (o.a.links[i].bad && o.v.cause[i] == link_cause::none) unexplained.push_back({o.a.links[i].link.from, o.a.links[i].link.to});
    CHECK(unexplained == std::vector<directed_link>{{f.slow_from, f.slow_to}});
}

}  // namespace

TEST_CASE("triage verdict: a slow host, a slow directed link and a slow uplink are each named, nothing else") {
    fabric f;
    const auto o = triage(f);
    check_names(f, o);
    CHECK(o.localisation_rounds >= 1);
    CHECK(o.localisation_rounds <= 4);
    // The hosts behind the slow uplink are not suspect, though most of their cross links are bad.
    std::size_t uplink_links = 0;
    for (std::size_t i = 0; i < o.a.links.size(); ++i) {
        const auto& l = o.a.links[i].link;
        const bool cross_at_slow_leaf = l.from / f.leaf != l.to / f.leaf && (l.from / f.leaf == f.slow_leaf || l.to / f.leaf == f.slow_leaf);
        if (!cross_at_slow_leaf || l.from == f.slow_host || l.to == f.slow_host) continue;
        CHECK(o.a.links[i].bad);
        CHECK(o.v.cause[i] == link_cause::uplink);
        ++uplink_links;
    }
    CHECK(uplink_links >= 2 * f.leaf);  // every host of the leaf sent and received across it
    const auto j = to_json(o.v, std::vector<std::string>{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7"});
    CHECK(j["uplinks"][f.slow_leaf]["bad"] == true);
    CHECK(j["uplinks"][f.slow_leaf]["group"] == "l6");
}

TEST_CASE("triage verdict: the slow link found in the shift rounds is retested and tested from both ends") {
    fabric f;
    f.slow_from = 2;  // in-group: 2 -> 3 is a shift-1 link of the first leaf
    f.slow_to = 3;
    const auto groups = f.group_of();
    std::map<std::pair<std::size_t, std::size_t>, link_sample> samples;
    for (const auto& r : triage_schedule(f.hosts, groups)) measure(f, r.links, samples);
    const auto a = judge(f, samples);
    const auto v = judge_groups(a, groups, f.hosts / f.leaf);
    const auto in = localisation_request(a, v, groups);
    REQUIRE(in.bad_links == std::vector<directed_link>{{2, 3}});
    const auto links = localisation_links(in);
    bool retested = false, from_end = false, to_end = false;
    for (const auto& l : links) {
        retested |= l == directed_link{2, 3};
        if (l.from == 2 && l.to != 3) from_end = in.healthy[l.to] && groups[l.to] == groups[2];
        if (l.to == 3 && l.from != 2) to_end = in.healthy[l.from] && groups[l.from] == groups[3];
    }
    CHECK(retested);
    CHECK(from_end);
    CHECK(to_end);
    check_names(f, triage(f));
}

TEST_CASE("triage verdict: a full matrix with groups names the same three") {
    fabric f;
    f.hosts = 32;
    f.slow_host = 5;
    f.slow_from = 9;
    f.slow_to = 14;  // in the same leaf as 9: a host link, not the uplink
    f.slow_leaf = 2;
    std::map<std::pair<std::size_t, std::size_t>, link_sample> samples;
    for (const auto& round : round_robin_schedule(f.hosts))
        for (const auto& p : round) {
            const auto d = measurement_order(p);
            measure(f, {d[0], d[1]}, samples);
        }
    outcome o;
    o.a = judge(f, samples);
    o.v = judge_groups(o.a, f.group_of(), f.hosts / f.leaf);
    check_names(f, o);
    // Per group pair: the slow leaf's pairs read half the rate (minus the slow host's share).
    for (const auto& p : o.v.pairs) {
        const bool through_slow_uplink = p.from_group != p.to_group && (p.from_group == f.slow_leaf || p.to_group == f.slow_leaf);
        REQUIRE(p.median_gbit);
        CHECK((*p.median_gbit < 0.6) == through_slow_uplink);
    }
}

TEST_CASE("triage verdict: without a slow uplink no uplink is named, and without groups the host explains its links") {
    fabric f;
    f.slow_leaf = 99;  // no such leaf
    auto o = triage(f);
    for (const auto& u : o.v.uplinks) CHECK_FALSE(u.bad);
    CHECK(o.v.suspects == std::vector<std::size_t>{f.slow_host});
    const auto plain = judge_without_groups(o.a);
    for (std::size_t i = 0; i < o.a.links.size(); ++i) {
        const auto& l = o.a.links[i].link;
        if (!o.a.links[i].bad) continue;
        const bool host = l.from == f.slow_host || l.to == f.slow_host;
        CHECK((plain.cause[i] == link_cause::host) == host);
    }
}

TEST_CASE("triage verdict: bad group labels are refused") {
    fabric f;
    std::map<std::pair<std::size_t, std::size_t>, link_sample> samples;
    measure(f, {{0, 1}, {1, 2}}, samples);
    const auto a = judge(f, samples);
    const std::vector<std::size_t> short_list{0, 1};
    CHECK_THROWS_AS(judge_groups(a, short_list, 2), meshperf::core::spec_error);
    std::vector<std::size_t> out_of_range(f.hosts, 0);
    out_of_range[3] = 5;
    CHECK_THROWS_AS(judge_groups(a, out_of_range, 2), meshperf::core::spec_error);
}

}  // namespace triage_verdict_test

namespace triage_verdict_ambiguity_test {

using namespace meshperf::analysis;

namespace {

/// Groups of 4 hosts: every in-group link, and `cross` links between groups, each at full
/// rate unless it crosses into or out of `slow_group` (half).
matrix_analysis grouped_matrix(std::size_t groups, std::size_t slow_group, std::vector<std::size_t>& group_of) {
    const std::size_t per = 4, hosts = groups * per;
    group_of.clear();
    for (std::size_t h = 0; h < hosts; ++h) group_of.push_back(h / per);
    std::vector<link_sample> v;
    auto add = [&](std::size_t from, std::size_t to) {
        link_sample s;
        s.from = from;
        s.to = to;
        const bool slow = group_of[from] != group_of[to] && (group_of[from] == slow_group || group_of[to] == slow_group);
        s.gbit_per_s = slow ? 0.5 : 1.0;
        v.push_back(s);
    };
    for (std::size_t a = 0; a < hosts; ++a)
        for (std::size_t b = 0; b < hosts; ++b)
            if (a != b && group_of[a] == group_of[b]) add(a, b);
    // Between each two groups: host i of one to host i of the other, both ways (few, as a
    // triage's shift rounds measure, so the healthy in-group links hold the median).
    for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t k = g + 1; k < groups; ++k)
            for (std::size_t i = 0; i < per; ++i) {
                add(g * per + i, k * per + i);
                add(k * per + i, g * per + i);
            }
    return analyze_matrix(hosts, v);
}

}  // namespace

TEST_CASE("triage verdict: with two groups a slow uplink is named with the other group, which the readings cannot rule out") {
    std::vector<std::size_t> group_of;
    const auto a = grouped_matrix(2, 1, group_of);  // group 1's uplink is the slow one
    const auto v = judge_groups(a, group_of, 2);
    std::size_t named = 0;
    for (const auto& u : v.uplinks)
        if (u.bad) {
            ++named;
            CHECK(u.cross_bad == 8);
            REQUIRE(u.or_groups.size() == 1);
            CHECK(u.or_groups[0] == 1 - u.group);  // either uplink: both are said
        }
    CHECK(named == 1);
    const std::vector<std::string> names{"A", "B"};
    const auto j = to_json(v, names);
    bool said = false;
    for (const auto& u : j["uplinks"])
        if (u["bad"].get<bool>()) said = u.contains("or_groups") && u["or_groups"].size() == 1;
    CHECK(said);
}

TEST_CASE("triage verdict: with three groups the slow uplink is told apart from the others") {
    std::vector<std::size_t> group_of;
    const auto a = grouped_matrix(3, 2, group_of);
    const auto v = judge_groups(a, group_of, 3);
    REQUIRE(v.uplinks.size() == 3);
    CHECK(v.uplinks[2].bad);
    CHECK(v.uplinks[2].or_groups.empty());  // groups 0 and 1 read fine between themselves
    CHECK_FALSE(v.uplinks[0].bad);
    CHECK_FALSE(v.uplinks[1].bad);
}

}  // namespace triage_verdict_ambiguity_test
