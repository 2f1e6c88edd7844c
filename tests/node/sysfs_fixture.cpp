#include "sysfs_fixture.hpp"

#include <cstdint>
#include <fmt/format.h>
#include <fstream>

namespace fs = std::filesystem;

namespace meshperf::test_fixture {

namespace {

constexpr int bases[] = {0x10, 0x30, 0x90, 0xb0};

std::string bdf(int bus, int dev = 0) { return fmt::format("0000:{:02x}:{:02x}.0", bus, dev); }

void put(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
}

struct pci_attrs {
    unsigned vendor = 0, device = 0, cls = 0;
    int numa = 0, width = 16, max_width = 16;
    double gts = 32, max_gts = 32;
    std::uint16_t acs_control = 0;
    bool bridge = false;
};

class tree {
public:
    tree(fs::path root, const fixture_options& o) : root_(std::move(root)), o_(o) {}

    /// A PCI function at devices/<path>, linked from bus/pci/devices/<id>.
    void pci(const std::string& path, pci_attrs a) {
        const fs::path dir = root_ / "devices" / path;
        const std::string id = fs::path(path).filename().string();
        if (const auto it = o_.links.find(id); it != o_.links.end()) {
            a.width = it->second.width;
            a.max_width = it->second.max_width;
            a.gts = it->second.gts;
            a.max_gts = it->second.max_gts;
        }
        put(dir / "vendor", fmt::format("0x{:04x}", a.vendor));
        put(dir / "device", fmt::format("0x{:04x}", a.device));
        put(dir / "class", fmt::format("0x{:06x}", a.cls));
        put(dir / "numa_node", std::to_string(a.numa));
        put(dir / "current_link_width", std::to_string(a.width));
        put(dir / "max_link_width", std::to_string(a.max_width));
        put(dir / "current_link_speed", fmt::format("{:.1f} GT/s PCIe", a.gts));
        put(dir / "max_link_speed", fmt::format("{:.1f} GT/s PCIe", a.max_gts));
        std::vector<std::uint8_t> config(o_.root_config ? 4096 : 64, 0);
        const auto w16 = [&](std::size_t at, unsigned v) {
            config[at] = static_cast<std::uint8_t>(v);
            config[at + 1] = static_cast<std::uint8_t>(v >> 8);
        };
        const auto w32 = [&](std::size_t at, std::uint32_t v) {
            w16(at, v & 0xffff);
            w16(at + 2, v >> 16);
        };
        w16(0, a.vendor);
        w16(2, a.device);
        if (o_.root_config) {
            // AER at 0x100, then (bridges) ACS at 0x148: the walk has to follow the list.
            w32(0x100, 0x0001u | 1u << 16 | (a.bridge ? 0x148u : 0u) << 20);
            if (a.bridge) {
                w32(0x148, 0x000Du | 1u << 16);
                w16(0x14c, 0x005f);  // capability: SV, TB, RR, CR, UF, DT
                w16(0x14e, a.acs_control);
            }
        }
        fs::create_directories(dir);
        std::ofstream(dir / "config", std::ios::binary).write(reinterpret_cast<const char*>(config.data()),
                                                              static_cast<std::streamsize>(config.size()));
        fs::create_directories(root_ / "bus/pci/devices");
        fs::create_directory_symlink(fs::path("../../../devices") / path, root_ / "bus/pci/devices" / id);
    }

    /// A class device (net, infiniband) under the PCI function at pci_path.
    fs::path class_device(const std::string& cls, const std::string& name, const std::string& pci_path) {
        const fs::path dir = root_ / "devices" / pci_path / cls / name;
        fs::create_directories(dir);
        fs::create_directory_symlink(fs::path("../../..") / fs::path(pci_path).filename(), dir / "device");
        fs::create_directories(root_ / "class" / cls);
        fs::create_directory_symlink(fs::path("../../devices") / pci_path / cls / name, root_ / "class" / cls / name);
        return dir;
    }

    /// Binds the function to a driver of bus/pci/drivers, whose `module` link names
    /// module/<name> as the kernel's does.
    void driver(const std::string& pci_path, const std::string& name) {
        if (!fs::exists(root_ / "bus/pci/drivers" / name)) {
            fs::create_directories(root_ / "bus/pci/drivers" / name);
            fs::create_directories(root_ / "module" / name);
            fs::create_directory_symlink(fs::path("../../../../module") / name, root_ / "bus/pci/drivers" / name / "module");
        }
        const fs::path pci(pci_path);
        const auto depth = std::distance(pci.begin(), pci.end());
        fs::path up;
        for (int i = 0; i < depth + 1; ++i) up /= "..";
        fs::create_directory_symlink(up / "bus/pci/drivers" / name, root_ / "devices" / pci_path / "driver");
    }

    void netdev(const std::string& name, const std::string& pci_path, int mtu, int speed_mbit) {
        const auto dir = class_device("net", name, pci_path);
        put(dir / "mtu", std::to_string(mtu));
        put(dir / "speed", std::to_string(speed_mbit));
        put(dir / "operstate", "up");
    }

    void rdma(const std::string& name, const std::string& pci_path, bool up) {
        const auto dir = class_device("infiniband", name, pci_path);
        put(dir / "fw_ver", "28.39.1002");
        put(dir / "ports/1/rate", "400 Gb/sec (4X NDR)");
        put(dir / "ports/1/state", up ? "4: ACTIVE" : "1: DOWN");
        put(dir / "ports/1/link_layer", "Ethernet");
        put(dir / "ports/1/active_mtu", "4096 (5)");
    }

    const fixture_options& options() const { return o_; }
    const fs::path& root() const { return root_; }

private:
    fs::path root_;
    fixture_options o_;
};

}  // namespace

std::vector<switch_devices> dgx_switches() {
    std::vector<switch_devices> out;
    for (int s = 0; s < 4; ++s) {
        const int b = bases[s];
        switch_devices d;
        d.numa = s / 2;
        d.root_complex = fmt::format("pci0000:{:02x}", b);
        d.root_port = bdf(b, 1);
        d.upstream = bdf(b + 1);
        for (int i = 0; i < 4; ++i) d.downstream.push_back(bdf(b + 2, i));
        d.gpu_a = bdf(b + 3);
        d.gpu_b = bdf(b + 4);
        d.nic_a = bdf(b + 5);
        d.nic_b = bdf(b + 6);
        d.netdev_a = fmt::format("enp{}s0np0", b + 5);
        d.netdev_b = fmt::format("enp{}s0np0", b + 6);
        d.rdma_a = fmt::format("mlx5_{}", 2 * s);
        d.rdma_b = fmt::format("mlx5_{}", 2 * s + 1);
        out.push_back(std::move(d));
    }
    return out;
}

void build_dgx_h100(const fs::path& root, const fixture_options& o) {
    tree t(root, o);
    for (const auto& d : dgx_switches()) {
        const auto rp = d.root_complex + "/" + d.root_port;
        const auto usp = rp + "/" + d.upstream;
        const auto bridge = [&](const std::string& id) {
            pci_attrs a{0x1000, 0xc030, 0x060400, d.numa};
            a.bridge = true;
            if (id == o.acs_bridge) a.acs_control = 0x000c;  // P2P Request + Completion Redirect
            if (d.upstream == o.narrow_uplink && (id == d.upstream || id == d.root_port)) a.width = 8;
            return a;
        };
        t.pci(rp, bridge(d.root_port));
        t.pci(usp, bridge(d.upstream));
        for (const auto& dsp : d.downstream) t.pci(usp + "/" + dsp, bridge(dsp));
        const std::string devices[] = {d.gpu_a, d.gpu_b, d.nic_a, d.nic_b};
        for (int i = 0; i < 4; ++i) {
            const auto path = usp + "/" + d.downstream[static_cast<std::size_t>(i)] + "/" + devices[i];
            const bool gpu = i < 2;
            pci_attrs a{gpu ? 0x10deu : 0x15b3u, gpu ? 0x2330u : 0x1021u, gpu ? 0x030200u : 0x020000u, d.numa};
            if (devices[i] == o.narrow_gpu) a.width = 8;
            if (devices[i] == o.slow_nic) a.gts = 16;
            t.pci(path, a);
            if (gpu) {
                t.driver(path, "nvidia");
                continue;
            }
            t.driver(path, "mlx5_core");
            const auto& netdev = i == 2 ? d.netdev_a : d.netdev_b;
            t.netdev(netdev, path, 9000, 400000);
            t.rdma(i == 2 ? d.rdma_a : d.rdma_b, path, netdev != o.down_rail);
        }
    }
    // The management NIC on socket 0, and loopback.
    pci_attrs mgmt{0x8086, 0x1533, 0x020000, 0, 1, 1, 2.5, 2.5};
    t.pci("pci0000:00/0000:00:1c.0", pci_attrs{0x8086, 0xa110, 0x060400, 0, 1, 1, 2.5, 2.5, 0, true});
    t.pci("pci0000:00/0000:00:1c.0/0000:01:00.0", mgmt);
    t.netdev("eno1", "pci0000:00/0000:00:1c.0/0000:01:00.0", 1500, 1000);
    fs::create_directories(root / "devices/virtual/net/lo");
    put(root / "devices/virtual/net/lo/mtu", "65536");
    put(root / "devices/virtual/net/lo/operstate", "unknown");
    fs::create_directory_symlink(fs::path("../../devices/virtual/net/lo"), root / "class/net/lo");
    put(root / "module/nvidia/version", "550.54.15");
    if (!o.nic_driver_version.empty()) put(root / "module/mlx5_core/version", o.nic_driver_version);
}

}  // namespace meshperf::test_fixture
