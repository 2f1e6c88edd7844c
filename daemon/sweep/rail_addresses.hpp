#pragma once
/// Where a run's rails may take its streams. A run spec's rails come from
/// the request, so neither end trusts them alone: the initiator's streams must leave from its
/// own addresses towards addresses its allow-list admits, and the peer accepts a spec only
/// when every rail's peer_address is one of its own, before any data stream (and the token
/// it carries) is opened.
#include "core/run_spec.hpp"
#include "daemon/runtime/context.hpp"

#include <string>

namespace meshperf::daemon {

/// Whether `ip` (an IPv4 or IPv6 literal, in any spelling) is an address of an interface of
/// this host.
bool is_own_address(const std::string& ip);

/// The initiator's check, before it opens the session: throws session_error naming the rail
/// when its local_address is not an address of this host, or its peer_address is outside
/// this daemon's allowed_peer_cidrs.
void check_initiator_rails(const daemon_context& ctx, const core::run_spec& spec);

/// The peer's check of a hello's spec: throws session_error naming the rail when its
/// peer_address is not an address of this host (the peer's own inventory).
void check_responder_rails(const core::run_spec& spec);

}  // namespace meshperf::daemon
