#include "analysis/matrix_schedule.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <utility>

namespace meshperf::analysis {

std::array<directed_link, 2> measurement_order(const host_pair& p) {
    return {directed_link{p.a, p.b}, directed_link{p.b, p.a}};
}

std::size_t round_count(std::size_t hosts) {
    if (hosts < 2) return 0;
    return hosts % 2 == 0 ? hosts - 1 : hosts;
}

std::size_t pairs_per_round(std::size_t hosts) { return hosts < 2 ? 0 : hosts / 2; }

std::vector<host_pair> schedule_round(std::size_t hosts, std::size_t round) {
    const std::size_t rounds = round_count(hosts);
    if (round >= rounds)
        throw core::spec_error(fmt::format("round {} does not exist: {} hosts have {} rounds (0..{})",
                                     round, hosts, rounds, rounds == 0 ? 0 : rounds - 1));
    // Circle method over m slots (m even): slot m−1 stays put, the others rotate by one per
    // round. With n odd the fixed slot is the bye (index n), and its partner sits out.
    const std::size_t m = hosts % 2 == 0 ? hosts : hosts + 1;
    const std::size_t ring = m - 1;
    std::vector<host_pair> pairs;
    pairs.reserve(m / 2);
    auto add = [&](std::size_t x, std::size_t y) {
        if (x >= hosts || y >= hosts) return;  // the bye
        pairs.push_back(x < y ? host_pair{x, y} : host_pair{y, x});
    };
    add(ring, round);
    for (std::size_t k = 1; k < m / 2; ++k) add((round + k) % ring, (round + ring - k) % ring);
    std::sort(pairs.begin(), pairs.end(), [](const host_pair& l, const host_pair& r) { return l.a < r.a; });
    return pairs;
}

std::vector<std::vector<host_pair>> round_robin_schedule(std::size_t hosts) {
    std::vector<std::vector<host_pair>> rounds;
    rounds.reserve(round_count(hosts));
    for (std::size_t r = 0; r < round_count(hosts); ++r) rounds.push_back(schedule_round(hosts, r));
    return rounds;
}

std::vector<std::vector<host_pair>> schedule_pairs(std::span<const host_pair> pairs) {
    std::vector<std::vector<host_pair>> rounds;
    std::vector<std::set<std::size_t>> busy;  // hosts taken, per round
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (const host_pair& given : pairs) {
        if (given.a == given.b)
            throw core::spec_error(fmt::format("pair ({}, {}) names one host twice: a host is not measured against itself",
                                         given.a, given.b));
        const host_pair p = given.a < given.b ? given : host_pair{given.b, given.a};
        if (!seen.emplace(p.a, p.b).second) continue;
        std::size_t r = 0;
        while (r < rounds.size() && (busy[r].contains(p.a) || busy[r].contains(p.b))) ++r;
        if (r == rounds.size()) {
            rounds.emplace_back();
            busy.emplace_back();
        }
        rounds[r].push_back(p);
        busy[r].insert(p.a);
        busy[r].insert(p.b);
    }
    return rounds;
}

schedule_estimate estimate_schedule(std::size_t hosts, double seconds_per_pair) {
    if (!std::isfinite(seconds_per_pair) || seconds_per_pair < 0)
        throw core::spec_error(fmt::format("per-pair cost {} s must be a finite, non-negative number of seconds",
                                     seconds_per_pair));
    schedule_estimate e;
    e.hosts = hosts;
    e.rounds = round_count(hosts);
    e.pairs_per_round = pairs_per_round(hosts);
    e.pairs = hosts < 2 ? 0 : hosts * (hosts - 1) / 2;
    e.measurements = 2 * e.pairs;
    e.seconds_per_pair = seconds_per_pair;
    e.wall_seconds = static_cast<double>(e.rounds) * seconds_per_pair;
    e.sequential_seconds = static_cast<double>(e.pairs) * seconds_per_pair;
    return e;
}

}  // namespace meshperf::analysis
