#include "daemon/runtime/self_peer.hpp"

#include "daemon/runtime/auth.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <unistd.h>

namespace meshperf::daemon {
namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool is_loopback(const ip_address& a) {
    if (a.is_v4()) return a.bytes[0] == 127;
    static const std::array<std::uint8_t, 16> one{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return a.bytes == one;
}

bool is_unspecified(const ip_address& a) {
    const auto n = a.is_v4() ? 4u : 16u;
    return std::all_of(a.bytes.begin(), a.bytes.begin() + n, [](std::uint8_t b) { return b == 0; });
}

std::string text_of(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
    else if (sa->sa_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
    return buf;
}

std::vector<std::string> interface_addresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (const ifaddrs* a = list; a; a = a->ifa_next)
        if (a->ifa_addr && (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6))
            out.push_back(text_of(a->ifa_addr));
    ::freeifaddrs(list);
    return out;
}

/// This host's names: its node name and that name's first label.
bool is_own_host_name(const std::string& host) {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return false;
    const auto own = lower(buf);
    const auto h = lower(host);
    return h == own || h == own.substr(0, own.find('.')) || own == h.substr(0, h.find('.'));
}

/// The addresses `host` stands for, where that needs no name server; empty otherwise.
std::vector<std::string> addresses_without_dns(const std::string& host) {
    if (parse_ip_address(host)) return {host};
    const auto h = lower(host);
    if (h == "localhost" || h.ends_with(".localhost")) return {"127.0.0.1", "::1"};
    if (!is_own_host_name(host)) return {};
    // The host's own name: /etc/hosts or nss-myhostname answer it.
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::vector<std::string> out;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return out;
    for (auto* a = res; a; a = a->ai_next) out.push_back(text_of(a->ai_addr));
    ::freeaddrinfo(res);
    return out;
}

}  // namespace

std::string new_instance_id() {
    std::random_device rd;
    std::mt19937_64 rng{(static_cast<std::uint64_t>(rd()) << 32) ^ rd()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}

bool reaches_listening_socket(const std::vector<std::string>& peer_ips, std::uint16_t peer_port,
                              const listening_socket& listening, const std::vector<std::string>& local_ips) {
    if (listening.port == 0 || peer_port != listening.port) return false;
    const auto bound = parse_ip_address(listening.address);
    if (!bound) return false;
    const auto own = bound->unmapped();
    for (const auto& text : peer_ips) {
        const auto parsed = parse_ip_address(text);
        if (!parsed) continue;
        const auto peer = parsed->unmapped();
        if (peer == own) return true;
        if (!is_unspecified(own)) continue;
        // 0.0.0.0 takes IPv4 only; :: takes both (Linux's default, bindv6only = 0).
        if (own.is_v4() && !peer.is_v4()) continue;
        if (is_loopback(peer)) return true;
        for (const auto& local : local_ips) {
            const auto l = parse_ip_address(local);
            if (l && l->unmapped() == peer) return true;
        }
    }
    return false;
}

std::optional<std::string> same_daemon_refusal(const transport::endpoint_address& peer, const listening_socket& listening) {
    if (listening.port == 0 || peer.port != listening.port) return std::nullopt;
    const auto ips = addresses_without_dns(peer.host);
    if (ips.empty() || !reaches_listening_socket(ips, peer.port, listening, interface_addresses())) return std::nullopt;
    const auto bound = parse_ip_address(listening.address);
    const auto where = bound && !bound->is_v4() ? fmt::format("[{}]:{}", listening.address, listening.port)
                                                : fmt::format("{}:{}", listening.address, listening.port);
    return fmt::format("initiator and peer are the same daemon: {} is this meshperfd (listening on {}); give another "
                       "daemon as the peer",
                       peer.to_string(), where);
}

}  // namespace meshperf::daemon
