#pragma once
/// Rounds of a fleet triage: a small constant number of shift rounds in which every host
/// sends to exactly one host and receives from exactly one, then localisation tests of what
/// read bad against hosts that read healthy. Pure arithmetic, no I/O.
///
/// A shift round over a ring of k hosts (positions 0..k−1) is the permutation p → p + t
/// (mod k): k directed links, every host sends once and receives once. Shifts of one ring
/// are distinct values in [1, k/2], so a host meets different partners in different rounds
/// (p ± t are all different); a shift of k/2 meets one partner both ways.
///
/// Without groups the ring is all hosts in the given order: triage_ring_rounds rounds
/// (shifts 1, ⌊(k−1)/2⌋, ⌊k/3⌋, then 2, 3, ... as far as k allows: 2 rounds for 4 or 5
/// hosts). With groups (topology labels, e.g. the leaf of each host):
/// - in-group rounds: each group of k ≥ 2 hosts is its own ring (a group with fewer
///   distinct shifts sits the later rounds out), so the traffic never leaves the group;
/// - cross-group rounds: hosts are ordered group by group and shifted by s with
///   M ≤ s ≤ n/2 (M the largest group), so every link joins two groups. When the largest
///   group holds more than half of the hosts no such shift exists: the round keeps only its
///   links between groups (some hosts idle).
///
/// A daemon measures one thing at a time (it either initiates or serves), so a round runs in
/// waves of disjoint links: triage_waves packs a round's links (2 waves for a shift round,
/// 3 when a cycle of the shift is odd).
#include "analysis/matrix_schedule.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace meshperf::analysis {

/// Shift rounds without groups.
inline constexpr std::size_t triage_ring_rounds = 3;
/// Shift rounds inside the groups, and across them, when a topology gives groups.
inline constexpr std::size_t triage_in_group_rounds = 2;
inline constexpr std::size_t triage_cross_group_rounds = 2;

/// What a shift round measures.
enum class triage_round_kind { ring, in_group, cross_group };

/// "ring", "in-group" or "cross-group".
const char* to_string(triage_round_kind);

/// One shift round: its links in cycle order (consecutive links share a host).
struct triage_round {
    triage_round_kind kind = triage_round_kind::ring;
    std::size_t shift = 0;  ///< the shift: of the ring; of the largest group's ring (in-group); of the hosts ordered by group (cross-group)
    std::vector<directed_link> links;
};

/// Up to `count` distinct shifts of a ring of k hosts, each in [1, k/2], spread over the
/// ring: 1, ⌊(k−1)/2⌋, ⌊k/3⌋, then 2, 3, ... Fewer when k is small (none for k < 2).
std::vector<std::size_t> ring_shifts(std::size_t k, std::size_t count);

/// The shift rounds of a triage of `hosts` hosts. `group_of` (empty: no groups) gives each
/// host's group index; with a single group it is as if none were given. Rounds whose links
/// would be empty are left out. Throws core::spec_error for fewer than 2 hosts or a
/// group_of of the wrong length.
std::vector<triage_round> triage_schedule(std::size_t hosts, std::span<const std::size_t> group_of = {});

/// Packs directed links into waves in which no host is in two links (as sender or
/// receiver), first fit in the given order. Throws core::spec_error for a link that joins
/// a host to itself or names a host >= hosts.
std::vector<std::vector<directed_link>> triage_waves(std::size_t hosts, std::span<const directed_link> links);

/// What localisation is asked to explain, from the shift rounds' verdicts.
struct localisation_input {
    std::size_t hosts = 0;
    std::vector<directed_link> bad_links;     ///< bad links not explained by a suspect host or an uplink
    std::vector<std::size_t> suspect_hosts;   ///< hosts most of whose links read bad
    std::vector<bool> healthy;                ///< per host: reachable and every link it was in read fine
    std::vector<std::size_t> group_of;        ///< per host, or empty
    std::vector<directed_link> measured;      ///< links already measured (partners avoid repeating them)
};

/// Localisation tests: every bad link a → b again, a → c and d → b; every suspect host h:
/// h → c and d → h. Partners c, d are healthy hosts only, preferably in the same group as
/// the host they test (so the test stays off the uplinks), then the least used, then the
/// nearest in index; a link already measured is not chosen as a partner test. A host with no
/// healthy partner left gets no partner test. Links are unique; order: as listed above.
std::vector<directed_link> localisation_links(const localisation_input&);

}  // namespace meshperf::analysis
