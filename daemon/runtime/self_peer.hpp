#pragma once
/// Telling a run's peer from this daemon itself: a run whose peer is the initiator would
/// wait for its own measurement gate (120 s, then "peer is busy"). Two guards: POST /v1/runs
/// refuses a peer that names this daemon's own listening socket (reaches_listening_socket,
/// same_daemon_refusal), and the peer session carries a per-daemon instance id that the
/// receiving daemon compares with its own (instance_header), for what names cannot show
/// (NAT, a DNS alias).
#include "transport/socket.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// The socket this daemon's HTTP server listens on.
struct listening_socket {
    std::string address;     ///< as bound: "0.0.0.0" or "::" when on every address
    std::uint16_t port = 0;  ///< 0 when unknown (then nothing is taken for this daemon)
};

/// Header of the session upgrade request carrying the initiating daemon's instance id.
inline constexpr const char* instance_header = "X-Meshperf-Instance";

/// A new random instance id (32 hex digits), one per daemon_context.
std::string new_instance_id();

/// Whether a connection to any of `peer_ips` (IP literals) on `peer_port` reaches the socket
/// `listening`: same port, and the address bound or, when bound to every address (0.0.0.0,
/// ::), any of `local_ips` (this host's interface addresses) or a loopback address. IPv4-mapped
/// IPv6 addresses count as the IPv4 address they carry. Pure: no I/O.
bool reaches_listening_socket(const std::vector<std::string>& peer_ips, std::uint16_t peer_port,
                              const listening_socket& listening, const std::vector<std::string>& local_ips);

/// Why `peer` is this daemon itself ("initiator and peer are the same daemon: ..."), or
/// nullopt. Resolves only what needs no name server: IP literals, localhost, and this host's
/// own name; any other name is left to the session's instance-id check.
std::optional<std::string> same_daemon_refusal(const transport::endpoint_address& peer, const listening_socket& listening);

}  // namespace meshperf::daemon
