#pragma once
/// What a judged matrix (full or triage: any set of measured links) says once the hosts'
/// groups are known: which groups' uplinks are slow, which hosts are suspect when the links
/// a slow uplink explains are set aside, what explains each bad link, and per group pair
/// figures. Also what the triage's localisation is asked to explain. Pure, no I/O.
///
/// Rules (fraction = outlier_options::suspect_fraction):
/// 1. A host is host-suspect when more than fraction of its in-group links (reachable, with
///    a figure) are bad: its own fault, whatever its uplink does.
/// 2. Uplinks, greedily: among cross-group links that touch no host-suspect host, the group
///    of two hosts or more with the largest share of bad ones is named when that share is
///    above fraction and its in-group links (touching no host-suspect host) are bad in no
///    more than fraction of them; its cross-group links are then set aside and the next
///    group is weighed on what is left. A group whose every cross-group reading goes to the
///    named one (with two groups, the other group) would read the same with its own uplink
///    slow: it is listed with the named one (uplink_verdict::or_groups), never left out.
/// 3. Suspect hosts: more than fraction of a host's links bad, links set aside by rule 2 not
///    counted (so the hosts behind a slow uplink are not named for it).
/// 4. A bad link is explained by a suspect host at either end ("host"), else by a named
///    uplink when it crosses groups at a named group ("uplink"), else by nothing (the link).
#include "analysis/outliers.hpp"
#include "analysis/triage_schedule.hpp"

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::analysis {

/// A group's uplink, as its links read.
struct uplink_verdict {
    std::size_t group = 0;
    bool bad = false;
    std::size_t cross_links = 0;       ///< cross-group links measured (touching no host-suspect host)
    std::size_t cross_bad = 0;
    std::size_t in_group_links = 0;    ///< in-group links measured (touching no host-suspect host)
    std::size_t in_group_bad = 0;
    std::optional<double> cross_median_gbit;
    std::optional<double> in_group_median_gbit;
    /// A named uplink: the groups whose own slow uplink the same readings would show (every
    /// cross-group reading of theirs is with this group, their in-group readings fine), so
    /// the readings cannot tell which of these uplinks it is. Empty: this one, as measured.
    std::vector<std::size_t> or_groups;
};

/// Links from one group to another (or within one) of a matrix.
struct group_pair_summary {
    std::size_t from_group = 0;
    std::size_t to_group = 0;
    std::size_t links = 0;             ///< reachable links with a figure
    std::size_t bad = 0;
    std::optional<double> median_gbit;
};

/// What explains a bad link (rail_plane: a slow rail plane; rail_uplink: a group's slow
/// uplink on one rail plane; both analysis/rail_planes, rules 0 and 4).
enum class link_cause { none, host, uplink, rail_plane, rail_uplink };

/// The grouped verdict.
struct group_verdict {
    std::vector<uplink_verdict> uplinks;          ///< one per group, by group index
    std::vector<group_pair_summary> pairs;        ///< ordered (from, to) pairs with links, ascending
    std::vector<std::size_t> suspects;            ///< by rule 3, ascending
    std::vector<link_cause> cause;                ///< per link of the analysis (none for good links)
    std::vector<std::size_t> cause_host;          ///< per link: the suspect end, or the named group (uplink)
};

/// Judges `a` with the hosts' groups (`group_of`: one group index < group_count per host).
/// Throws core::spec_error for a group_of of the wrong length or an index out of range.
/// `aside` (empty, or one cause per link of `a`): the links the rails explain (rail_plane or
/// rail_uplink; none for the others); every rule counts them as measured and not bad, and
/// that is their cause.
group_verdict judge_groups(const matrix_analysis& a, std::span<const std::size_t> group_of, std::size_t group_count,
                           const std::vector<link_cause>& aside = {});

/// Explanations without groups: a bad link touching one of a's suspects is the host's. With
/// `aside` (as above) the suspects are taken again, the links set aside counted as not bad.
group_verdict judge_without_groups(const matrix_analysis& a, const std::vector<link_cause>& aside = {});

/// Puts the verdict's suspects into `a` (suspects[], hosts[].suspect).
void apply_suspects(const group_verdict& v, matrix_analysis& a);

/// What localisation should test after the shift rounds: the bad reachable links no host or
/// uplink explains, the suspect hosts, the healthy hosts (reachable, not suspect, and in no
/// bad link but those a named uplink explains), the links already measured.
localisation_input localisation_request(const matrix_analysis& a, const group_verdict& v, std::span<const std::size_t> group_of);

/// JSON: uplinks[] {group, bad, cross_links, cross_bad, in_group_links, in_group_bad,
/// cross_median_gbit_per_s, in_group_median_gbit_per_s}, group_pairs[] {from, to, links,
/// bad, median_gbit_per_s}; groups named by `group_names`.
nlohmann::json to_json(const group_verdict& v, std::span<const std::string> group_names);

/// "host", "uplink", "rail plane", "rail uplink" or "" for none.
const char* to_string(link_cause);

}  // namespace meshperf::analysis
