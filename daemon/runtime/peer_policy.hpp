#pragma once
/// The peer allow-list of the configuration ([limits] allowed_peer_cidrs) applied to both
/// directions: peer sessions and data streams coming in, and runs going out.
#include "daemon/runtime/context.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace meshperf::daemon {

/// Why a connection from `remote_ip` (as the socket reports it; IPv4-mapped IPv6 is
/// unmapped) may not open a peer session or data stream, or std::nullopt when it may (the
/// list is empty, or it holds the address).
std::optional<std::string> incoming_peer_refusal(const daemon_context& ctx, std::string_view remote_ip);

/// Throws core::spec_error when a run towards `peer` ("host:port") would leave the
/// allow-list: every address the name resolves to must be inside it, so DNS cannot take a
/// run elsewhere. Does nothing when the list is empty. Resolves the name (blocking): call it
/// on the executor thread, not the I/O thread.
void check_run_target(const daemon_context& ctx, const std::string& peer);

/// Why this daemon may not connect to `ip` (an IP literal), or std::nullopt when it may:
/// the allow-list, as for incoming peers.
std::optional<std::string> outgoing_refusal(const cidr_list& allowed, const std::string& ip);

/// Routes every outbound connection of the process (transport::connect_tcp: peer sessions,
/// data streams on any rail, collective ranks and their mesh, rail probes) through
/// outgoing_refusal with a copy of ctx.allowed_peers. Call once at start, before any thread
/// connects.
void install_connect_policy(const daemon_context& ctx);

}  // namespace meshperf::daemon
