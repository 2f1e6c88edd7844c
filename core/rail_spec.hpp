#pragma once
/// The rails of a run: pairs of one NIC of the initiator and the NIC of the peer on the same
/// rail, measured at once in one run (docs/rails.md). The CLI matches them from both
/// daemons' GET /v1/info; the daemons only check the list and bind each rail's streams to
/// its addresses.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// One rail of a run: where its streams start and where they go.
struct rail_pair {
    std::string name;           ///< the initiator's rail ("ens1f0"): how results name it
    std::string peer_name;      ///< the peer's rail matched with it
    std::string local_address;  ///< the initiator's IP on the rail: its streams bind to it
    std::string peer_address;   ///< the peer's IP on the rail: its streams connect there, at the peer daemon's port
    /// The lower of both ends' link rates in Gbit/s (10^9 bit/s); empty when either is unknown.
    std::optional<double> rate_gbit;
    /// This rail's memory at the initiator and at the peer ("host", "cuda:N"); empty: the
    /// run's local_memory / remote_memory. The CLI sets them for --memory cuda:auto: the GPU
    /// nearest each end's NIC (client/support/rail_memory.hpp).
    std::string local_memory, peer_memory;
};

/// Throws spec_error ("<field> 'x' is not a memory domain: use host or cuda:N ...") unless
/// `m` is "host" or "cuda:N" with N of 1 to 3 digits. (Here because a rail may carry its
/// own memory; run specs and collective specs check theirs with it too.)
void check_memory_domain(std::string_view field, const std::string& m);

/// Most rails one run carries (a node has at most 8–16 NICs).
inline constexpr std::size_t max_rails = 16;

/// Checks a rail list: at most max_rails, names unique and interface names as Linux allows them
/// (valid_netdev_name), addresses IPv4 or
/// IPv6 literals, no local or peer address twice, rates positive and finite, memories empty
/// or "host" / "cuda:N". Throws
/// spec_error naming the rail and what to do.
void validate_rails(const std::vector<rail_pair>&);

nlohmann::json to_json(const rail_pair&);
/// Parses one entry of a spec's "rails"; throws spec_error for a wrong type or unknown field.
rail_pair rail_pair_from_json(const nlohmann::json&);

/// The rail that stream `index_in_role` of one direction belongs to when each rail carries
/// `streams_per_rail` streams: rail-major, so streams 0..n−1 are rail 0's.
inline std::size_t rail_of_stream(std::size_t index_in_role, std::uint32_t streams_per_rail) {
    return streams_per_rail ? index_in_role / streams_per_rail : 0;
}

/// A data stream's failure with the rail it ran on, so a rail's link going down mid-run is
/// named in the point's error: "Connection timed out (stream 1 on rail ra1, 10.61.1.1 ->
/// 10.61.1.2, peer's rb1)". `error` unchanged without rails or when the index is past them.
std::string with_stream_rail(const std::string& error, const std::vector<rail_pair>& rails, std::uint32_t streams_per_rail,
                             std::size_t index_in_role);

}  // namespace meshperf::core
