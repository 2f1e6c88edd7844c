#include "node/host_addresses.hpp"

#include <arpa/inet.h>
#include <bit>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

namespace meshperf::node {

namespace {

int prefix_of(const sockaddr* mask) {
    if (!mask) return -1;
    int bits = 0;
    if (mask->sa_family == AF_INET) {
        bits = std::popcount(reinterpret_cast<const sockaddr_in*>(mask)->sin_addr.s_addr);
    } else if (mask->sa_family == AF_INET6) {
        for (const auto b : reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr.s6_addr) bits += std::popcount(b);
    } else {
        return -1;
    }
    return bits;
}

}  // namespace

std::vector<interface_address> host_addresses() {
    std::vector<interface_address> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (auto* a = list; a; a = a->ifa_next) {
        if (!a->ifa_addr || !a->ifa_name) continue;
        const auto family = a->ifa_addr->sa_family;
        if (family != AF_INET && family != AF_INET6) continue;
        char text[INET6_ADDRSTRLEN] = {};
        const void* raw = family == AF_INET ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr)
                                            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr);
        if (!::inet_ntop(family, raw, text, sizeof text)) continue;
        out.push_back({a->ifa_name, text, prefix_of(a->ifa_netmask), (a->ifa_flags & IFF_UP) != 0,
                       (a->ifa_flags & IFF_LOOPBACK) != 0});
    }
    ::freeifaddrs(list);
    return out;
}

}  // namespace meshperf::node
