#include "node/pci_path.hpp"

#include <algorithm>

namespace meshperf::node {

std::string_view to_string(pci_path p) {
    switch (p) {
    case pci_path::pix: return "PIX";
    case pci_path::pxb: return "PXB";
    case pci_path::phb: return "PHB";
    case pci_path::node: return "NODE";
    case pci_path::sys: return "SYS";
    case pci_path::unknown: return "unknown";
    }
    return "unknown";
}

namespace {

std::size_t shared_bridges(const gpu::pci_location& a, const gpu::pci_location& b) {
    const auto [ia, ib] = std::mismatch(a.bridges.begin(), a.bridges.end(), b.bridges.begin(), b.bridges.end());
    return static_cast<std::size_t>(ia - a.bridges.begin());
}

}  // namespace

pci_path path_between(const gpu::pci_location& a, const gpu::pci_location& b) {
    if (a.root_complex.empty() || b.root_complex.empty()) return pci_path::unknown;
    if (a.root_complex != b.root_complex) {
        if (a.numa_node < 0 || b.numa_node < 0) return pci_path::unknown;
        return a.numa_node == b.numa_node ? pci_path::node : pci_path::sys;
    }
    const auto shared = shared_bridges(a, b);
    if (shared == 0) return pci_path::phb;  // different root ports: up to the host bridge and down
    // Bridges on the way: the deepest shared one and those below it on both sides. One
    // switch is its downstream port, its upstream port and the other downstream port (3);
    // a lone bridge holding both is 1. More is a second switch level.
    const auto crossed = (a.bridges.size() - shared) + (b.bridges.size() - shared) + 1;
    return crossed <= 3 ? pci_path::pix : pci_path::pxb;
}

bool crosses_cpu(pci_path p) { return p != pci_path::pix && p != pci_path::pxb; }

std::vector<std::string> bridges_between(const gpu::pci_location& a, const gpu::pci_location& b) {
    std::vector<std::string> out;
    if (a.root_complex.empty() || a.root_complex != b.root_complex) return out;
    const auto shared = shared_bridges(a, b);
    const auto from = shared == 0 ? 0 : shared - 1;
    for (auto i = from; i < a.bridges.size(); ++i) out.push_back(a.bridges[i]);
    for (auto i = shared; i < b.bridges.size(); ++i) out.push_back(b.bridges[i]);
    return out;
}

}  // namespace meshperf::node
