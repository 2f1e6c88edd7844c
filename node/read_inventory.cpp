#include "node/read_inventory.hpp"

#include "node/gpu_discovery.hpp"
#include "node/nic_discovery.hpp"
#include "node/sysfs_text.hpp"

#include <fmt/format.h>
#include <limits>

namespace meshperf::node {

namespace {

/// Each GPU's nearest rail: the closest path, and among rails equally close the one with
/// the fewest GPUs so far (two GPUs and two NICs on a switch pair one to one, as NCCL
/// spreads them), then the lowest PCI bus id (GPUs are taken in bus order too).
void pair_gpus(node_inventory& inv) {
    std::vector<int> load(inv.rails.size(), 0);
    for (std::size_t gi = 0; gi < inv.gpus.size(); ++gi) {
        auto& g = inv.gpus[gi];
        if (!g.pci) continue;
        auto best = pci_path::unknown;
        std::vector<pci_path> paths(inv.rails.size(), pci_path::unknown);
        for (std::size_t ri = 0; ri < inv.rails.size(); ++ri) {
            if (!inv.rails[ri].pci) continue;
            paths[ri] = path_between(*g.pci, *inv.rails[ri].pci);
            if (paths[ri] < best) best = paths[ri];
        }
        if (best == pci_path::unknown) continue;
        g.nearest_path = best;
        int least = std::numeric_limits<int>::max();
        for (std::size_t ri = 0; ri < inv.rails.size(); ++ri) {
            if (paths[ri] != best) continue;
            g.equally_near.push_back(ri);
            const bool lower_bus = g.nearest_rail && inv.rails[ri].pci->bus_id < inv.rails[*g.nearest_rail].pci->bus_id;
            if (load[ri] < least || (load[ri] == least && lower_bus)) {
                least = load[ri];
                g.nearest_rail = ri;
            }
        }
        ++load[*g.nearest_rail];
        inv.rails[*g.nearest_rail].nearest_gpus.push_back(gi);
    }
}

}  // namespace

node_inventory read_inventory(const inventory_input& in) {
    node_inventory inv;
    inv.sysfs_root = in.sysfs_root;
    inv.gpus = discover_gpus(in.sysfs_root);
    for (auto& g : inv.gpus)
        for (const auto& [index, bus] : in.cuda_devices)
            if (gpu::normalize_bus_id(bus) == g.bus_id) g.cuda_index = index;
    inv.gpu_driver = read_line(in.sysfs_root / "module/nvidia/version").value_or("");
    inv.control_interface = interface_of_address(in.addresses, in.control_address);
    auto nics = discover_nics(in.sysfs_root, in.addresses);
    if (nics.empty()) inv.notes.push_back(fmt::format("no network interface under {}/class/net", in.sysfs_root.string()));
    inv.rails = select_rails(std::move(nics), in.selection, in.addresses, inv.control_interface, inv.notes);
    pair_gpus(inv);
    std::vector<path_device> devices;
    for (const auto& g : inv.gpus)
        if (g.pci) devices.push_back({"GPU " + g.bus_id, *g.pci});
    for (const auto& r : inv.rails)
        if (r.pci) devices.push_back({"rail " + r.name, *r.pci});
    inv.path_links = read_path_links(in.sysfs_root, devices);
    return inv;
}

}  // namespace meshperf::node
