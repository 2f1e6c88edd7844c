#include "daemon/sweep/rail_addresses.hpp"

#include "daemon/runtime/peer_policy.hpp"
#include "daemon/session/frame_channel.hpp"
#include "transport/socket.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

namespace meshperf::daemon {
namespace {

/// `ip` as inet_ntop writes it ("::0:1" -> "::1"); empty when it is not an IP literal.
std::string canonical_ip(const std::string& ip) {
    in6_addr a6{};
    in_addr a4{};
    char text[INET6_ADDRSTRLEN] = {};
    if (::inet_pton(AF_INET, ip.c_str(), &a4) == 1) return ::inet_ntop(AF_INET, &a4, text, sizeof text) ? text : "";
    if (::inet_pton(AF_INET6, ip.c_str(), &a6) == 1) return ::inet_ntop(AF_INET6, &a6, text, sizeof text) ? text : "";
    return {};
}

}  // namespace

bool is_own_address(const std::string& ip) {
    const auto c = canonical_ip(ip);
    return !c.empty() && !transport::interface_for_address(c).empty();
}

void check_initiator_rails(const daemon_context& ctx, const core::run_spec& spec) {
    for (const auto& r : spec.rails) {
        if (!is_own_address(r.local_address))
            throw session_error(fmt::format("rail {}: local_address {} is not an address of this host's interfaces: a rail's "
                                            "streams leave from this daemon's own address on it (see GET /v1/info rails)",
                                            r.name, r.local_address));
        if (auto why = outgoing_refusal(ctx.allowed_peers, r.peer_address))
            throw session_error(fmt::format("rail {}: peer_address {}: {}", r.name, r.peer_address, *why));
    }
}

void check_responder_rails(const core::run_spec& spec) {
    for (const auto& r : spec.rails)
        if (!is_own_address(r.peer_address))
            throw session_error(fmt::format("rail {}: peer_address {} is not an address of this peer's interfaces: rails must "
                                            "name the peer's own addresses, as its GET /v1/info lists them",
                                            r.peer_name, r.peer_address));
}

}  // namespace meshperf::daemon
