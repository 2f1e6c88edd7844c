#pragma once
/// `matrix --rails` across the matrix: rail k of every host against rail k of every other
/// (a rail plane: the rails of one name, which a rail-optimised fabric puts on one switch
/// plane). Within a link a rail is judged against its siblings (core::rail_sibling_problems);
/// that cannot tell a plane slow for everyone from a bad NIC, and names every link of a slow
/// plane bad, so every host would read suspect. Pure, no I/O.
///
/// Rules (fraction: --bad-bw-fraction; suspect_fraction: --suspect-fraction):
/// 1. A rail endpoint is a host's rail of one name, over the links it sent or received on.
///    Its figure is the median of its links' readings: each one's share of its link rate when
///    every reading of the matrix has one (rails of mixed speeds), else Gbit/s.
/// 2. A plane's figure is the median of its endpoints' figures (so one bad NIC, a few of the
///    plane's links, does not move it). With two planes or more, each with two endpoints or
///    more, a plane below fraction × the median of the planes' figures is slow: its switch
///    plane, its uplinks or its settings, not any one host.
/// 3. An endpoint of a plane that is not slow is suspect when it has two links or more and
///    more than suspect_fraction of them have this rail bad: its NIC, cable or switch port.
/// 4. A link is explained by the rails when every rail it has a problem with is on a slow
///    plane or crosses a slow rail uplink (rule 0).
/// The plane rule needs 4 hosts or more to tell a plane from a NIC: with 3, each endpoint
/// meets a bad NIC in half its links, so the medians of rule 2 move with it.
///
/// With the hosts' groups (--topology: leaves, racks), first:
/// 0. Rail uplinks, per plane and greedily, as analysis/triage_verdict names a group's uplink:
///    leaving out the rail endpoints bad in more than suspect_fraction of their in-group
///    readings on the plane (a NIC's own fault), the group of two hosts or more whose
///    cross-group readings on the plane are bad in the largest share is named when that share
///    is above suspect_fraction and its in-group readings on the plane (one or more) are bad
///    in no more than suspect_fraction of them: that group's uplink on that rail (its leaf's
///    ports towards the spine of the plane), not its hosts' NICs and not the whole plane. Its
///    cross-group readings on the plane are then set aside, and the next group is weighed on
///    what is left. A plane where every group with cross-group readings is named, or has
///    none left, is slow between all its leaves (its spine, or, with two groups, either
///    uplink or the spine: the readings cannot tell): its uplinks are withdrawn and rule 2
///    judges the plane. Rules 1–3 then take a reading set aside as measured and not bad, and
///    leave it out of the figures.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::analysis {

/// One rail of one measured link, as the matrix hands it over.
struct rail_observation {
    std::string rail;       ///< the sending host's rail
    std::string peer_rail;  ///< the receiving host's rail matched with it
    double gbit_per_s = 0;  ///< 0 when it failed or moved nothing
    std::optional<double> rate_fraction;
    bool bad = false;       ///< the link has a problem with this rail (any rule)
};

/// The rails of every link measured so far, compact: 20 bytes a rail a link, the names in
/// a table. A retest replaces a link's rails.
class rail_cells {
public:
    /// Records the rails of from → to (a retest: they replace the earlier ones).
    void put(std::size_t from, std::size_t to, std::span<const rail_observation> rails, bool retest);
    /// Whether any rail was recorded.
    bool empty() const { return cells_.empty(); }

    /// One rail of one link.
    struct cell {
        std::uint32_t from = 0, to = 0;
        std::uint8_t rail = 0, peer_rail = 0;  ///< indices into names()
        bool bad = false, retest = false;
        float gbit_per_s = 0;
        float rate_fraction = 0;               ///< 0: unknown
    };
    /// Every cell recorded, in order (a retested link's earlier cells included).
    const std::vector<cell>& cells() const { return cells_; }
    /// Whether from → to was retested (then only its retest cells count).
    bool replaced(std::uint32_t from, std::uint32_t to) const { return replaced_.count({from, to}) > 0; }
    /// Rail names by index.
    const std::vector<std::string>& names() const { return names_; }

private:
    std::uint8_t name_index(const std::string& name);
    std::vector<cell> cells_;
    std::vector<std::string> names_;
    std::set<std::pair<std::uint32_t, std::uint32_t>> replaced_;
};

/// A plane, as rule 2 reads it.
struct rail_plane_verdict {
    std::string rail;
    std::size_t endpoints = 0;         ///< hosts with this rail in a measured link
    std::size_t links = 0;             ///< link readings on the plane
    std::size_t bad = 0;               ///< of those, with this rail bad
    std::optional<double> figure;      ///< median of its endpoints' figures (absent: nothing moved)
    std::optional<double> of_reference;  ///< figure / the median of the planes' figures
    bool slow = false;
};

/// An endpoint that rule 3 names.
struct rail_endpoint_verdict {
    std::size_t host = 0;
    std::string rail;
    std::size_t links = 0;
    std::size_t bad = 0;
    std::optional<double> figure;      ///< median of its links' readings
};

/// A group's uplink on one plane that rule 0 names.
struct rail_uplink_verdict {
    std::string rail;
    std::size_t group = 0;
    std::size_t cross_links = 0;     ///< its cross-group readings on the plane weighed (the suspect endpoints' left out)
    std::size_t cross_bad = 0;
    std::size_t in_group_links = 0;  ///< its in-group readings on the plane weighed
    std::size_t in_group_bad = 0;
};

/// What explains a link for its rails (rule 4).
enum class rail_explanation : std::uint8_t { none, plane, uplink };

/// The verdict across the matrix.
struct rail_fleet_verdict {
    bool by_rate = false;              ///< figures are shares of the link rate (else Gbit/s)
    std::optional<double> reference;   ///< median of the planes' figures (absent: fewer than two planes)
    std::vector<rail_plane_verdict> planes;        ///< by rail name
    std::vector<rail_endpoint_verdict> suspects;   ///< by host, then rail
    std::vector<rail_uplink_verdict> uplinks;      ///< named by rule 0, in the order named
    /// Links rule 4 explains, sorted by (from, to): 12 bytes each, as a slow plane may explain them all.
    struct explained_link {
        std::uint32_t from = 0, to = 0;
        rail_explanation by = rail_explanation::plane;  ///< uplink when every bad rail of it crosses a named uplink
        bool operator<(const explained_link& o) const { return from != o.from ? from < o.from : to < o.to; }
    };
    std::vector<explained_link> explained;
    /// Whether rule 4 explains from → to.
    bool explains(std::size_t from, std::size_t to) const { return explanation(from, to) != rail_explanation::none; }
    /// What rule 4 says explains from → to.
    rail_explanation explanation(std::size_t from, std::size_t to) const;
    /// The slow planes' names.
    std::vector<std::string> slow_planes() const;
};

/// Judges the rails of a matrix of host_count hosts; with `group_of` (one group index below
/// group_count per host, or empty: no groups) rule 0 too. Throws core::spec_error unless
/// 0 < fraction <= 1 and 0 <= suspect_fraction < 1, or for a group_of of the wrong length or
/// an index out of range.
rail_fleet_verdict judge_rail_planes(const rail_cells& cells, std::size_t host_count, double fraction, double suspect_fraction,
                                     std::span<const std::size_t> group_of = {}, std::size_t group_count = 0);

/// JSON: {compared_by: "rate share"|"gbit_per_s", reference, planes[] {rail, endpoints, links,
/// bad, figure, of_reference, slow}, suspects[] {host, rail, links, bad, figure}, uplinks[]
/// {rail, group, cross_links, cross_bad, in_group_links, in_group_bad}, explained_links};
/// hosts named by `host_names`, groups by `group_names` (index when empty).
nlohmann::json to_json(const rail_fleet_verdict&, std::span<const std::string> host_names = {},
                       std::span<const std::string> group_names = {});

/// The verdict in lines for a terminal, none when nothing is slow or suspect: "rail plane
/// r1 is slow: ...", "rail r1's uplink of leaf2 is slow: ...", "rail r0 of h2:7470 is
/// suspect: ...".
std::vector<std::string> describe(const rail_fleet_verdict&, std::span<const std::string> host_names,
                                  std::span<const std::string> group_names = {});

}  // namespace meshperf::analysis
