#include "node/gpu_discovery.hpp"

#include "node/sysfs_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <system_error>

namespace fs = std::filesystem;

namespace meshperf::node {

std::vector<gpu_entry> discover_gpus(const fs::path& root) {
    std::vector<gpu_entry> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root / "bus/pci/devices", ec)) {
        const auto vendor = read_hex(e.path() / "vendor");
        const auto cls = read_hex(e.path() / "class");
        if (!vendor || *vendor != nvidia_vendor || !cls) continue;
        const auto base_sub = *cls >> 8;  // class code without the programming interface
        if (base_sub != 0x0302 && base_sub != 0x0300) continue;
        gpu_entry g;
        g.bus_id = e.path().filename().string();
        if (const auto dev = read_hex(e.path() / "device")) g.device_id = fmt::format("0x{:04x}", *dev);
        g.pci = gpu::locate_pci_device(g.bus_id, root);
        g.link = read_pcie_link(root, g.bus_id);
        out.push_back(std::move(g));
    }
    std::sort(out.begin(), out.end(), [](const gpu_entry& a, const gpu_entry& b) { return a.bus_id < b.bus_id; });
    return out;
}

}  // namespace meshperf::node
