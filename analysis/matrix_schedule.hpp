#pragma once
/// Round schedule of a cluster matrix: which pairs of hosts are measured together, so that
/// no host takes part in two measurements at once. Pure arithmetic, no I/O.
///
/// The schedule is the circle method (round-robin tournament): n hosts, n even, give n−1
/// rounds of n/2 disjoint unordered pairs; every unordered pair appears in exactly one
/// round. For n odd a "bye" slot is added: n rounds of (n−1)/2 pairs, one host idle per
/// round. Within its round a pair is measured in both directions, one after the other:
/// first `a → b` (a initiates, a sends), then `b → a`. The pairs of a round run
/// concurrently, so a round takes as long as its slowest pair.
///
/// Sequential directions are a choice: each directed measurement has both hosts and their
/// link to itself (no full-duplex contention), and 2(n−1) direction slots is the least any
/// schedule needs for the n(n−1) directed measurements when each host is in at most one
/// measurement at a time.
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace meshperf::analysis {

/// An unordered pair of host indices, stored with a < b. Measured a → b, then b → a.
struct host_pair {
    std::size_t a = 0;
    std::size_t b = 0;
    friend bool operator==(const host_pair&, const host_pair&) = default;
};

/// One directed measurement: `from` initiates and sends to `to`.
struct directed_link {
    std::size_t from = 0;
    std::size_t to = 0;
    friend bool operator==(const directed_link&, const directed_link&) = default;
};

/// The two directed measurements of a pair, in the order they run: a → b, then b → a.
std::array<directed_link, 2> measurement_order(const host_pair& p);

/// Number of rounds for n hosts: 0 for n < 2, n − 1 for n even, n for n odd.
std::size_t round_count(std::size_t hosts);

/// Pairs in every round: n / 2 (rounded down); 0 for n < 2.
std::size_t pairs_per_round(std::size_t hosts);

/// The pairs of round r (0 <= r < round_count(hosts)), disjoint, each with a < b, ordered by
/// a. Throws core::spec_error when r is out of range. O(n) time and memory, so a driver can walk
/// the rounds of a large cluster without holding the whole schedule.
std::vector<host_pair> schedule_round(std::size_t hosts, std::size_t round);

/// All rounds: round_count(hosts) vectors of pairs_per_round(hosts) pairs.
std::vector<std::vector<host_pair>> round_robin_schedule(std::size_t hosts);

/// Packs an arbitrary set of pairs (e.g. the bad pairs to retest) into rounds of disjoint
/// pairs, greedily in the given order: each pair goes to the first round in which neither
/// host is busy. Pairs are normalised to a < b and duplicates are dropped; a pair with
/// a == b throws core::spec_error. Uses at most 2·d − 1 rounds, d the largest number of pairs
/// any host is in.
std::vector<std::vector<host_pair>> schedule_pairs(std::span<const host_pair> pairs);

/// Default cost of one directed measurement of a matrix: a short 8 B latency point plus a
/// short 1 MiB bandwidth point, with their warm-ups and set-up, in seconds. An assumption
/// for planning (docs/operations.md), not a measured figure.
inline constexpr double default_seconds_per_direction = 1.5;

/// Default cost of one pair: both directions, one after the other.
inline constexpr double default_seconds_per_pair = 2 * default_seconds_per_direction;

/// The arithmetic of a full matrix.
struct schedule_estimate {
    std::size_t hosts = 0;
    std::size_t rounds = 0;            ///< round_count(hosts)
    std::size_t pairs_per_round = 0;   ///< concurrent pairs in each round
    std::size_t pairs = 0;             ///< unordered pairs: n(n−1)/2
    std::size_t measurements = 0;      ///< directed measurements: n(n−1)
    double seconds_per_pair = 0;       ///< both directions of one pair
    double wall_seconds = 0;           ///< rounds × seconds_per_pair (rounds run one after another)
    double sequential_seconds = 0;     ///< pairs × seconds_per_pair, for comparison: one pair at a time
};

/// Estimates a matrix of `hosts` hosts when one pair (both directions) costs
/// `seconds_per_pair` seconds. Assumes every pair of a round takes the same time and no
/// retests; a real round lasts as long as its slowest pair. Throws core::spec_error unless
/// seconds_per_pair is finite and non-negative.
schedule_estimate estimate_schedule(std::size_t hosts,
                                    double seconds_per_pair = default_seconds_per_pair);

}  // namespace meshperf::analysis
