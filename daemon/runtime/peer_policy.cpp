#include "daemon/runtime/peer_policy.hpp"

#include "core/error.hpp"
#include "transport/connect_policy.hpp"
#include "transport/socket.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <algorithm>
#include <vector>

namespace meshperf::daemon {

std::optional<std::string> incoming_peer_refusal(const daemon_context& ctx, std::string_view remote_ip) {
    if (ctx.allowed_peers.empty()) return std::nullopt;
    const auto ip = parse_ip_address(remote_ip);
    if (ip && ctx.allowed_peers.contains(ip->unmapped())) return std::nullopt;
    return fmt::format("address {} is not in this daemon's allowed_peer_cidrs ({})", remote_ip,
                       ctx.allowed_peers.to_string());
}

void check_run_target(const daemon_context& ctx, const std::string& peer) {
    if (ctx.allowed_peers.empty()) return;
    const auto ep = transport::parse_endpoint(peer);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(ep.host.c_str(), nullptr, &hints, &res);
    if (rc != 0)
        throw core::spec_error(fmt::format("cannot resolve peer {}: {} (allowed_peer_cidrs needs its address)", peer, gai_strerror(rc)));
    std::vector<std::string> outside;
    bool any = false;
    for (auto* a = res; a; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN] = {};
        const void* raw = a->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                                                  : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
        if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
        ::inet_ntop(a->ai_family, raw, text, sizeof text);
        any = true;
        const auto ip = parse_ip_address(text);
        if (!ip || !ctx.allowed_peers.contains(ip->unmapped()))
            if (std::find(outside.begin(), outside.end(), text) == outside.end()) outside.push_back(text);
    }
    ::freeaddrinfo(res);
    if (!any) throw core::spec_error(fmt::format("peer {} has no IP address", peer));
    if (!outside.empty()) {
        std::string list;
        for (const auto& o : outside) list += (list.empty() ? "" : ", ") + o;
        throw core::spec_error(fmt::format("peer {} ({}) is outside this daemon's allowed_peer_cidrs ({}): refused by its configuration",
                                           peer, list, ctx.allowed_peers.to_string()));
    }
}

std::optional<std::string> outgoing_refusal(const cidr_list& allowed, const std::string& ip) {
    if (allowed.empty()) return std::nullopt;
    const auto parsed = parse_ip_address(ip);
    if (parsed && allowed.contains(parsed->unmapped())) return std::nullopt;
    return fmt::format("address {} is not in this daemon's allowed_peer_cidrs ({}): refused by its configuration", ip,
                       allowed.to_string());
}

void install_connect_policy(const daemon_context& ctx) {
    if (ctx.allowed_peers.empty()) {
        transport::set_connect_policy({});
        return;
    }
    transport::set_connect_policy([allowed = ctx.allowed_peers](const std::string& ip) { return outgoing_refusal(allowed, ip); });
}

}  // namespace meshperf::daemon
