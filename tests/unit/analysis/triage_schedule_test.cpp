#include "analysis/triage_schedule.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <doctest/doctest.h>
#include <set>
#include <vector>

namespace triage_schedule_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::analysis;

namespace {

/// Groups of `size` hosts in host order; the last one takes the remainder.
std::vector<std::size_t> leaves(std::size_t n, std::size_t size) {
    std::vector<std::size_t> g(n);
    for (std::size_t h = 0; h < n; ++h) g[h] = h / size;
    return g;
}

/// Checks one schedule: per round, sends and receives per host (exactly once where
/// `every_host` says so, else at most once), no self-link, the round's kind kept (in-group
/// links inside a group, cross-group links across), no partner met in two rounds, and
/// waves that are disjoint and cover the round. Counts failures, checked once.
void check_plan(std::size_t n, const std::vector<std::size_t>& group_of, const std::vector<triage_round>& rounds,
                bool every_host_in_group, bool every_host_cross) {
    std::size_t problems = 0;
    constexpr std::size_t most = 16;  // partners a host can meet: 2 per round, at most 4 rounds (8 with room)
    std::vector<std::array<std::pair<std::size_t, std::size_t>, most>> met(n);  // (partner, round)
    std::vector<std::size_t> met_count(n, 0);
    auto meet = [&](std::size_t h, std::size_t partner, std::size_t r) {
        if (met_count[h] == most) return void(++problems);
        met[h][met_count[h]++] = {partner, r};
    };
    for (std::size_t r = 0; r < rounds.size(); ++r) {
        const auto& round = rounds[r];
        std::vector<unsigned> sends(n, 0), receives(n, 0);
        for (const auto& l : round.links) {
            problems += l.from >= n || l.to >= n || l.from == l.to;
            if (l.from >= n || l.to >= n) continue;
            ++sends[l.from];
            ++receives[l.to];
            if (!group_of.empty()) {
                const bool same = group_of[l.from] == group_of[l.to];
                problems += round.kind == triage_round_kind::in_group ? !same : round.kind == triage_round_kind::cross_group && same;
            }
            meet(l.from, l.to, r);
            meet(l.to, l.from, r);
        }
        const bool exact = round.kind == triage_round_kind::ring ||
                           (round.kind == triage_round_kind::in_group ? every_host_in_group : every_host_cross);
        for (std::size_t h = 0; h < n; ++h)
            problems += exact ? (sends[h] != 1 || receives[h] != 1) : (sends[h] > 1 || receives[h] > 1);
        const auto waves = triage_waves(n, round.links);
        std::size_t covered = 0;
        for (const auto& w : waves) {
            std::vector<bool> busy(n, false);
            for (const auto& l : w) {
                problems += busy[l.from] || busy[l.to];
                busy[l.from] = busy[l.to] = true;
            }
            covered += w.size();
        }
        problems += covered != round.links.size() || waves.size() > 3;
    }
    for (std::size_t h = 0; h < n; ++h)
        for (std::size_t i = 0; i < met_count[h]; ++i)
            for (std::size_t j = i + 1; j < met_count[h]; ++j)
                problems += met[h][i].first == met[h][j].first && met[h][i].second != met[h][j].second;
    CHECK_MESSAGE(problems == 0, "n = ", n, ": ", problems, " violations");
}

}  // namespace

TEST_CASE("triage: a ring of every host, n = 4..4096: each sends and receives once a round, new partners each round") {
    for (std::size_t n = 4; n <= 4096; ++n) {
        const auto rounds = triage_schedule(n);
        const std::size_t expected = n < 6 ? 2 : triage_ring_rounds;
        if (rounds.size() != expected) {
            CHECK_MESSAGE(rounds.size() == expected, "n = ", n);
            break;
        }
        check_plan(n, {}, rounds, true, true);
    }
}

TEST_CASE("triage: leaves of 8 to 16 hosts, n = 4..4096: in-group rounds stay in the leaf, cross-group rounds leave it") {
    for (std::size_t n = 4; n <= 4096; n += (n < 300 ? 1 : 37)) {
        const std::size_t size = 8 + n % 9;
        const auto group_of = leaves(n, size);
        const auto rounds = triage_schedule(n, group_of);
        const std::size_t last = n % size;  // hosts in the short last leaf (0: none)
        const bool groups = n > size;
        const bool cross_possible = groups && 2 * size <= n;
        std::size_t in_group = 0, cross = 0;
        for (const auto& r : rounds) (r.kind == triage_round_kind::cross_group ? cross : in_group) += 1;
        CAPTURE(n);
        if (!groups) {  // one leaf: a plain ring
            check_plan(n, {}, rounds, true, true);
            continue;
        }
        CHECK(in_group == triage_in_group_rounds);
        if (cross_possible) CHECK(cross == std::min(triage_cross_group_rounds, n / 2 - size + 1));  // shifts in [M, n/2]
        else CHECK(cross >= 1);
        check_plan(n, group_of, rounds, last == 0 || last >= 4, cross_possible);
    }
}

TEST_CASE("triage: the number of shift rounds does not grow with the cluster") {
    std::size_t most = 0;
    for (std::size_t n : {4u, 64u, 1000u, 2048u, 16384u}) {
        most = std::max(most, triage_schedule(n).size());
        most = std::max(most, triage_schedule(n, leaves(n, 16)).size());
    }
    CHECK(most == std::max(triage_ring_rounds, triage_in_group_rounds + triage_cross_group_rounds));
}

TEST_CASE("triage: ring shifts are distinct and in [1, k/2]") {
    CHECK(ring_shifts(4, 3) == std::vector<std::size_t>{1, 2});
    CHECK(ring_shifts(64, 3) == std::vector<std::size_t>{1, 31, 21});
    CHECK(ring_shifts(2, 3) == std::vector<std::size_t>{1});
    CHECK(ring_shifts(1, 3).empty());
    std::vector<std::size_t> shifts;  // 8 leaves of 8: in-group 1 and 3, cross-group 8 (the next leaf) and 31
    for (const auto& r : triage_schedule(64, leaves(64, 8))) shifts.push_back(r.shift);
    CHECK(shifts == std::vector<std::size_t>{1, 3, 8, 31});
}

TEST_CASE("triage: bad input is refused") {
    CHECK_THROWS_AS(triage_schedule(1), meshperf::core::spec_error);
    const std::vector<std::size_t> two{0, 1};
    CHECK_THROWS_AS(triage_schedule(5, two), meshperf::core::spec_error);
    const std::vector<directed_link> self{{2, 2}};
    CHECK_THROWS_AS(triage_waves(4, self), meshperf::core::spec_error);
    const std::vector<directed_link> outside{{0, 9}};
    CHECK_THROWS_AS(triage_waves(4, outside), meshperf::core::spec_error);
}

TEST_CASE("triage: localisation tests each bad link and suspect host against healthy hosts only") {
    for (std::size_t n : {4u, 9u, 64u, 500u, 4096u}) {
        CAPTURE(n);
        localisation_input in;
        in.hosts = n;
        in.group_of = leaves(n, 8);
        in.healthy.assign(n, true);
        // Every seventh host unhealthy; bad links among them and to healthy hosts; suspects.
        for (std::size_t h = 0; h < n; h += 7) in.healthy[h] = false;
        for (std::size_t h = 0; h + 1 < n; h += 14) in.bad_links.push_back({h, h + 1});
        for (std::size_t h = 7; h < n; h += 14) in.suspect_hosts.push_back(h);
        in.measured.push_back({0, 2});  // 0 -> 2 was measured: not a partner test
        for (const auto& l : in.bad_links) in.healthy[l.to] = false;
        const auto links = localisation_links(in);
        std::set<std::pair<std::size_t, std::size_t>> seen;
        std::size_t problems = 0;
        for (const auto& l : links) {
            problems += !seen.emplace(l.from, l.to).second;
            const bool retest = std::find(in.bad_links.begin(), in.bad_links.end(), l) != in.bad_links.end();
            if (retest) continue;
            problems += !(in.healthy[l.from] || in.healthy[l.to]);  // a partner test has a healthy end
            const std::size_t tested = in.healthy[l.from] ? l.to : l.from;
            const std::size_t partner = in.healthy[l.from] ? l.from : l.to;
            problems += in.healthy[tested];  // the tested end is a bad link's end or a suspect
            const bool partner_in_group = in.group_of[partner] == in.group_of[tested];
            bool healthy_in_group = false;
            for (std::size_t c = 0; c < n; ++c) healthy_in_group |= c != tested && in.healthy[c] && in.group_of[c] == in.group_of[tested];
            problems += healthy_in_group && !partner_in_group && n < 100;  // small n: the preference is exact
            problems += l.from == 0 && l.to == 2;
        }
        for (const auto& b : in.bad_links) problems += !seen.contains({b.from, b.to});
        for (std::size_t h : in.suspect_hosts) {
            bool sends = false, receives = false;
            for (const auto& l : links) {
                sends |= l.from == h;
                receives |= l.to == h;
            }
            problems += !sends || !receives;
        }
        CHECK(problems == 0);
        const auto waves = triage_waves(n, links);
        CHECK(waves.size() <= 8);
    }
}

TEST_CASE("triage: localisation without a healthy partner leaves the host untested") {
    localisation_input in;
    in.hosts = 4;
    in.healthy = {false, false, false, false};
    in.bad_links = {{0, 1}};
    in.suspect_hosts = {2};
    const auto links = localisation_links(in);
    REQUIRE(links.size() == 1);
    CHECK(links[0] == directed_link{0, 1});
}

}  // namespace triage_schedule_test
