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
/// 4. A link is explained by the slow planes when every rail it has a problem with is on one.
/// The plane rule needs 4 hosts or more to tell a plane from a NIC: with 3, each endpoint
/// meets a bad NIC in half its links, so the medians of rule 2 move with it.
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

/// The verdict across the matrix.
struct rail_fleet_verdict {
    bool by_rate = false;              ///< figures are shares of the link rate (else Gbit/s)
    std::optional<double> reference;   ///< median of the planes' figures (absent: fewer than two planes)
    std::vector<rail_plane_verdict> planes;        ///< by rail name
    std::vector<rail_endpoint_verdict> suspects;   ///< by host, then rail
    /// Links (from, to) rule 4 explains, sorted: 8 bytes each, as a slow plane may explain them all.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> explained;
    /// Whether rule 4 explains from → to.
    bool explains(std::size_t from, std::size_t to) const;
    /// The slow planes' names.
    std::vector<std::string> slow_planes() const;
};

/// Judges the rails of a matrix of host_count hosts. Throws core::spec_error unless
/// 0 < fraction <= 1 and 0 <= suspect_fraction < 1.
rail_fleet_verdict judge_rail_planes(const rail_cells& cells, std::size_t host_count, double fraction, double suspect_fraction);

/// JSON: {compared_by: "rate share"|"gbit_per_s", reference, planes[] {rail, endpoints, links,
/// bad, figure, of_reference, slow}, suspects[] {host, rail, links, bad, figure}}; hosts
/// named by `host_names` (index when empty).
nlohmann::json to_json(const rail_fleet_verdict&, std::span<const std::string> host_names = {});

/// The verdict in lines for a terminal, none when nothing is slow or suspect: "rail plane
/// r1 is slow: ...", "rail r0 of h2:7470 is suspect: ...".
std::vector<std::string> describe(const rail_fleet_verdict&, std::span<const std::string> host_names);

}  // namespace meshperf::analysis
