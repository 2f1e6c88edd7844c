#include "gpu/topology.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <system_error>

namespace fs = std::filesystem;

namespace meshperf::gpu {
namespace {

bool all_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool is_bus_id(std::string_view s) { return normalize_bus_id(s).has_value() && s.find(':') != s.rfind(':'); }

// A host bridge directory: "pci0000:16" (also "pci10000:e0" for Intel VMD domains).
bool is_root_complex(std::string_view s) {
    if (s.size() < 6 || s.substr(0, 3) != "pci") return false;
    const auto colon = s.find(':');
    return colon != std::string_view::npos && all_hex(s.substr(3, colon - 3)) && all_hex(s.substr(colon + 1));
}

std::optional<pci_location> location_from(const fs::path& link) {
    std::error_code ec;
    const fs::path dir = fs::canonical(link, ec);
    if (ec) return std::nullopt;
    pci_location loc;
    std::vector<std::string> chain;
    fs::path walked, pci_dir;
    for (const auto& part : dir) {
        walked /= part;
        const std::string p = part.string();
        if (is_root_complex(p)) {
            loc.root_complex = p;
            chain.clear();  // bridges count from the (innermost) host bridge down
        } else if (!loc.root_complex.empty() && is_bus_id(p)) {
            chain.push_back(*normalize_bus_id(p));
            pci_dir = walked;
        }
    }
    if (loc.root_complex.empty() || chain.empty()) return std::nullopt;
    // A virtio NIC's link ends below its PCI function (.../0000:00:03.0/virtio0): the
    // innermost PCI function is the device.
    loc.sysfs_path = pci_dir.string();
    loc.bus_id = chain.back();
    chain.pop_back();
    loc.bridges = std::move(chain);
    std::ifstream in(pci_dir / "numa_node");
    if (!(in >> loc.numa_node)) loc.numa_node = -1;
    return loc;
}

std::string numa_text(int node) { return node < 0 ? "NUMA node unknown" : fmt::format("NUMA node {}", node); }

std::string place(const pci_location& l, std::string_view name) {
    return fmt::format("{} ({} under {}, {})", name, l.bus_id, l.root_complex, numa_text(l.numa_node));
}

}  // namespace

std::optional<std::string> normalize_bus_id(std::string_view id) {
    // [DOMAIN:]BUS:DEV.FN, hex.
    const auto dot = id.rfind('.');
    const auto last_colon = id.rfind(':');
    if (dot == std::string_view::npos || last_colon == std::string_view::npos || dot < last_colon) return std::nullopt;
    const auto fn = id.substr(dot + 1);
    const auto dev = id.substr(last_colon + 1, dot - last_colon - 1);
    const auto head = id.substr(0, last_colon);
    const auto first_colon = head.rfind(':');
    const auto bus = first_colon == std::string_view::npos ? head : head.substr(first_colon + 1);
    auto domain = first_colon == std::string_view::npos ? std::string_view("0000") : head.substr(0, first_colon);
    if (!all_hex(fn) || fn.size() != 1 || !all_hex(dev) || dev.size() > 2 || !all_hex(bus) || bus.size() > 2 ||
        !all_hex(domain) || domain.size() > 8)
        return std::nullopt;
    // nvidia-smi prints an 8-digit domain; sysfs uses 4 digits unless the domain needs more.
    while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
    std::string out = fmt::format("{:0>4}:{:0>2}:{:0>2}.{}", domain, bus, dev, fn);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

int numa_node_of(std::string_view bus_id, const fs::path& sysfs_root) {
    const auto id = normalize_bus_id(bus_id);
    if (!id) return -1;
    std::ifstream in(sysfs_root / "bus/pci/devices" / *id / "numa_node");
    int node = -1;
    if (!(in >> node)) return -1;
    return node;
}

std::optional<pci_location> locate_pci_device(std::string_view bus_id, const fs::path& sysfs_root) {
    const auto id = normalize_bus_id(bus_id);
    if (!id) return std::nullopt;
    return location_from(sysfs_root / "bus/pci/devices" / *id);
}

std::optional<pci_location> locate_net_interface(std::string_view ifname, const fs::path& sysfs_root) {
    if (ifname.empty() || ifname.find('/') != std::string_view::npos) return std::nullopt;
    return location_from(sysfs_root / "class/net" / std::string(ifname) / "device");
}

std::optional<pci_location> locate_rdma_device(std::string_view name, const fs::path& sysfs_root) {
    if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
    return location_from(sysfs_root / "class/infiniband" / std::string(name) / "device");
}

std::optional<pci_location> locate_nic(std::string_view name, const fs::path& sysfs_root) {
    if (auto loc = locate_rdma_device(name, sysfs_root)) return loc;
    return locate_net_interface(name, sysfs_root);
}

std::string_view to_string(pci_relation r) {
    switch (r) {
    case pci_relation::same_switch: return "same_switch";
    case pci_relation::same_root_complex: return "same_root_complex";
    case pci_relation::same_numa_node: return "same_numa_node";
    case pci_relation::cross_numa: return "cross_numa";
    case pci_relation::different_root_complex: return "different_root_complex";
    case pci_relation::unknown: return "unknown";
    }
    return "unknown";
}

pci_affinity compare_locations(const pci_location& gpu, const pci_location& nic, std::string_view gpu_name,
                               std::string_view nic_name) {
    pci_affinity a;
    const std::string g = place(gpu, gpu_name), n = place(nic, nic_name);
    if (gpu.root_complex == nic.root_complex) {
        const auto [gi, ni] = std::mismatch(gpu.bridges.begin(), gpu.bridges.end(), nic.bridges.begin(), nic.bridges.end());
        const bool shared_bridge = gi != gpu.bridges.begin();
        a.relation = shared_bridge ? pci_relation::same_switch : pci_relation::same_root_complex;
        a.shares_root_complex = true;
        a.description = shared_bridge
            ? fmt::format("{} and {} share the PCIe bridge {}", g, n, *std::prev(gi))
            : fmt::format("{} and {} share the root complex {} through different root ports", g, n, gpu.root_complex);
        return a;
    }
    if (gpu.numa_node >= 0 && nic.numa_node >= 0)
        a.relation = gpu.numa_node == nic.numa_node ? pci_relation::same_numa_node : pci_relation::cross_numa;
    else
        a.relation = pci_relation::different_root_complex;
    a.description = fmt::format("{} and {} sit under different PCIe root complexes{}", g, n,
                                a.relation == pci_relation::cross_numa ? " on different NUMA nodes" : "");
    a.warning = fmt::format(
        "GPU and NIC on different PCIe root complexes: {}; traffic between them crosses the CPU{}, which lowers "
        "GPUDirect RDMA and staging bandwidth; pick the NIC on the GPU's root complex",
        a.description, a.relation == pci_relation::cross_numa ? " socket interconnect" : "");
    return a;
}

pci_affinity gpu_nic_affinity(std::string_view gpu_bus_id, std::string_view gpu_name, std::string_view nic_name,
                              const fs::path& sysfs_root) {
    const auto gpu = locate_pci_device(gpu_bus_id, sysfs_root);
    const auto nic = locate_nic(nic_name, sysfs_root);
    if (gpu && nic) return compare_locations(*gpu, *nic, gpu_name, nic_name);
    pci_affinity a;
    if (!gpu)
        a.description = fmt::format("PCIe position of {} unknown: no PCI device {} under {}/bus/pci/devices", gpu_name,
                                    gpu_bus_id, sysfs_root.string());
    else
        a.description = fmt::format("PCIe position of {0} unknown: neither {1}/class/infiniband/{0}/device nor "
                                    "{1}/class/net/{0}/device leads to a PCI device (a virtual interface?)",
                                    nic_name, sysfs_root.string());
    return a;
}

}  // namespace meshperf::gpu
