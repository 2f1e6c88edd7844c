#include "node/pcie_path_links.hpp"

#include <algorithm>
#include <map>

namespace meshperf::node {

std::vector<pcie_path_link> read_path_links(const std::filesystem::path& sysfs_root, const std::vector<path_device>& devices) {
    std::vector<pcie_path_link> out;
    std::map<std::string, pcie_link> read;  // bus id -> link, each function read once
    const auto link_of = [&](const std::string& bus_id) -> const pcie_link& {
        auto it = read.find(bus_id);
        if (it == read.end()) it = read.emplace(bus_id, read_pcie_link(sysfs_root, bus_id)).first;
        return it->second;
    };
    for (const auto& d : devices) {
        auto chain = d.pci.bridges;
        chain.push_back(d.pci.bus_id);
        for (std::size_t k = 0; k + 1 < chain.size(); k += 2) {
            const auto& above = chain[k];
            const auto& below = chain[k + 1];
            if (!link_of(below).has_attributes) continue;
            auto it = std::find_if(out.begin(), out.end(), [&](const pcie_path_link& l) { return l.above == above && l.below == below; });
            if (it == out.end()) {
                out.push_back({above, below, link_of(above), link_of(below), k + 2 < chain.size(), {}});
                it = std::prev(out.end());
            }
            if (std::find(it->behind.begin(), it->behind.end(), d.label) == it->behind.end()) it->behind.push_back(d.label);
        }
    }
    return out;
}

const pcie_path_link* link_below(const std::vector<pcie_path_link>& links, const std::string& bus_id) {
    for (const auto& l : links)
        if (l.below == bus_id) return &l;
    return nullptr;
}

pcie_link as_far_as_port_allows(const std::vector<pcie_path_link>& links, const std::string& bus_id, const pcie_link& own) {
    const auto* hop = link_below(links, bus_id);
    return hop && hop->above_link.has_attributes ? capped_by(own, hop->above_link) : own;
}

}  // namespace meshperf::node
