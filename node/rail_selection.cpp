// select_rails (nic_discovery.hpp): which NICs carry traffic.
#include "node/nic_discovery.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

namespace meshperf::node {

std::string rail_pattern_problem(const std::string& p) {
    if (!(p.empty() || p.size() > 64 || p.find_first_of(" \t/") != std::string::npos)) return {};
    const auto shown = p.size() > 64 ? p.substr(0, 64) + "..." : p;
    return fmt::format("\"{}\" is not an interface name pattern: give a name or a glob such as \"enp*\" or \"mlx5_*\" (no "
                       "spaces or slashes, at most 64 characters)",
                       shown);
}

namespace {

bool matches(const std::string& pattern, const rail& r) {
    const auto hit = [&](const std::string& name) { return !name.empty() && ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0; };
    return hit(r.netdev) || hit(r.rdma_device);
}

bool matches_any(const std::vector<std::string>& patterns, const rail& r) {
    for (const auto& p : patterns)
        if (matches(p, r)) return true;
    return false;
}

bool is_up(const rail& r, const std::vector<interface_address>& addresses) {
    for (const auto& a : addresses)
        if (a.interface == r.netdev && a.up) return true;
    return false;
}

bool is_loopback(const rail& r, const std::vector<interface_address>& addresses) {
    if (r.netdev == "lo") return true;
    for (const auto& a : addresses)
        if (a.interface == r.netdev && a.loopback) return true;
    return false;
}

}  // namespace

std::vector<rail> select_rails(std::vector<rail> nics, const rail_selection& sel,
                               const std::vector<interface_address>& addresses, const std::string& control_interface,
                               std::vector<std::string>& notes) {
    std::vector<rail> chosen;
    if (!sel.include.empty()) {
        for (const auto& p : sel.include) {
            bool any = false;
            for (const auto& r : nics) any = any || matches(p, r);
            if (!any) notes.push_back(fmt::format("[rails] include pattern '{}' matches no NIC", p));
        }
        for (auto& r : nics)
            if (matches_any(sel.include, r)) chosen.push_back(std::move(r));
    } else {
        std::vector<rail> up;
        for (auto& r : nics)
            if (!r.netdev.empty() && !r.addresses.empty() && is_up(r, addresses) && !is_loopback(r, addresses))
                up.push_back(std::move(r));
        for (auto& r : up) {
            if (!control_interface.empty() && r.netdev == control_interface && up.size() > 1) {
                notes.push_back(fmt::format("{} left out of the rails: it carries the daemon's control address", r.netdev));
                continue;
            }
            chosen.push_back(std::move(r));
        }
    }
    std::vector<rail> out;
    for (auto& r : chosen)
        if (!matches_any(sel.exclude, r)) out.push_back(std::move(r));
    return out;
}

}  // namespace meshperf::node
