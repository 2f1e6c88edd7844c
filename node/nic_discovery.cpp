#include "node/nic_discovery.hpp"

#include "core/netdev_name.hpp"
#include "node/sysfs_text.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <system_error>

namespace fs = std::filesystem;

namespace meshperf::node {

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

/// The RDMA port of a device: the lowest-numbered one under ports/.
int first_port(const fs::path& dev) {
    int best = 0;
    for (const auto& p : names_in(dev / "ports")) {
        const auto n = leading_number(p);
        if (n && *n >= 1 && (best == 0 || *n < best)) best = static_cast<int>(*n);
    }
    return best;
}

/// Names in the order people count them: "enp21s0" before "enp149s0", "mlx5_2" before "mlx5_10".
bool name_before(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0, db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
        if (da && db) {
            std::size_t ei = i, ej = j;
            while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
            while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
            const auto na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
            const auto ta = na.substr(std::min(na.find_first_not_of('0'), na.size())), tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
            if (ta.size() != tb.size()) return ta.size() < tb.size();
            if (ta != tb) return ta < tb;
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

void read_rdma(const fs::path& root, rail& r) {
    const auto dev = root / "class/infiniband" / r.rdma_device;
    r.firmware = read_line(dev / "fw_ver").value_or("");
    r.rdma_port = first_port(dev);
    if (r.rdma_port == 0) return;
    const auto port = dev / "ports" / std::to_string(r.rdma_port);
    r.link_layer = read_line(port / "link_layer").value_or("");
    if (const auto rate = read_line(port / "rate")) {
        if (const auto v = leading_number(*rate); v && *v > 0) {
            r.rate_gbit = *v;
            r.rate_source = "rdma port rate";
        }
    }
    if (const auto state = read_line(port / "state")) {
        r.state_text = *state;
        r.link_up = state->find("ACTIVE") != std::string::npos;
    }
    if (!r.mtu)
        if (const auto mtu = read_line(port / "active_mtu"); mtu)
            if (const auto v = leading_number(*mtu)) r.mtu = static_cast<int>(*v);
}

/// The netdev a software RDMA device (Soft-RoCE's rxe, siw) runs over; such a device has no
/// PCI position to match it by. Its ports' RoCE GIDs name it (ports/N/gid_attrs/ndevs/*),
/// and rxe also says it in `parent`. Empty when neither names an interface of class/net.
std::string netdev_of_soft_device(const fs::path& root, const std::string& device) {
    const auto dev = root / "class/infiniband" / device;
    const auto is_netdev = [&](const std::string& name) {
        std::error_code ec;
        return core::valid_netdev_name(name) && fs::is_directory(root / "class/net" / name, ec);
    };
    for (const auto& port : names_in(dev / "ports"))
        for (const auto& index : names_in(dev / "ports" / port / "gid_attrs/ndevs"))
            if (const auto name = read_line(dev / "ports" / port / "gid_attrs/ndevs" / index); name && is_netdev(*name)) return *name;
    if (const auto parent = read_line(dev / "parent"); parent && is_netdev(*parent)) return *parent;
    return {};
}

void read_netdev(const fs::path& root, rail& r) {
    const auto dir = root / "class/net" / r.netdev;
    if (const auto mtu = read_integer(dir / "mtu"); mtu && *mtu > 0) r.mtu = static_cast<int>(*mtu);
    if (const auto speed = read_integer(dir / "speed"); speed && *speed > 0) {
        r.rate_gbit = static_cast<double>(*speed) / 1000.0;  // Mbit/s
        r.rate_source = "netdev speed";
    }
    if (const auto state = read_line(dir / "operstate")) {
        r.state_text = *state;
        if (*state == "up") r.link_up = true;
        else if (*state == "down" || *state == "lowerlayerdown" || *state == "notpresent") r.link_up = false;
    }
}

/// The NIC's kernel driver: the basename of its device's `driver` link (the netdev's device,
/// else the RDMA device's, else the PCI function's), and the version of the module behind
/// it (the driver's `module` link names it; the driver's own name otherwise). Out-of-tree
/// drivers (MLNX_OFED, DOCA) declare a module version; in-tree ones usually do not, and
/// then the version stays empty: unknown, never guessed.
void read_driver(const fs::path& root, rail& r) {
    std::vector<fs::path> links;
    if (!r.netdev.empty()) links.push_back(root / "class/net" / r.netdev / "device/driver");
    if (!r.rdma_device.empty()) links.push_back(root / "class/infiniband" / r.rdma_device / "device/driver");
    if (r.pci) links.push_back(fs::path(r.pci->sysfs_path) / "driver");
    for (const auto& link : links) {
        r.driver = link_target_name(link);
        if (r.driver.empty()) continue;
        auto module = link_target_name(link / "module");
        if (module.empty()) module = r.driver;
        r.driver_version = read_line(root / "module" / module / "version").value_or("");
        return;
    }
}

}  // namespace

std::vector<rail> discover_nics(const fs::path& root, const std::vector<interface_address>& addresses) {
    std::map<std::string, std::string> rdma_of_bus;  // PCI bus id -> RDMA device
    std::map<std::string, gpu::pci_location> rdma_loc;
    std::map<std::string, std::string> soft_rdma_of_netdev;  // netdev -> software RDMA device over it
    for (const auto& name : names_in(root / "class/infiniband")) {
        if (auto loc = gpu::locate_rdma_device(name, root)) {
            rdma_of_bus.emplace(loc->bus_id, name);
            rdma_loc.emplace(name, *loc);
        } else if (const auto netdev = netdev_of_soft_device(root, name); !netdev.empty()) {
            soft_rdma_of_netdev.emplace(netdev, name);
        }
    }
    std::vector<rail> out;
    std::map<std::string, bool> rdma_used;
    // The rail's RDMA device and its port's rate and state, which say more than the netdev's.
    const auto attach_rdma = [&](rail& r, const std::string& device) {
        r.rdma_device = device;
        rdma_used[device] = true;
        const auto netdev_rate = r.rate_gbit;
        const auto netdev_state = r.link_up;
        r.rate_gbit.reset();
        r.link_up.reset();
        read_rdma(root, r);
        if (!r.rate_gbit && netdev_rate) {  // the port says nothing: keep the netdev's
            r.rate_gbit = netdev_rate;
            r.rate_source = "netdev speed";
        }
        if (!r.link_up) r.link_up = netdev_state;
    };
    for (const auto& ifname : names_in(root / "class/net")) {
        std::error_code ec;
        if (!fs::is_directory(root / "class/net" / ifname, ec)) continue;  // class/net/bonding_masters is a file
        rail r;
        r.name = r.netdev = ifname;
        r.pci = gpu::locate_net_interface(ifname, root);
        read_netdev(root, r);
        if (r.pci)
            if (auto it = rdma_of_bus.find(r.pci->bus_id); it != rdma_of_bus.end() && !rdma_used[it->second])
                attach_rdma(r, it->second);
        if (r.rdma_device.empty())
            if (auto it = soft_rdma_of_netdev.find(ifname); it != soft_rdma_of_netdev.end() && !rdma_used[it->second])
                attach_rdma(r, it->second);
        out.push_back(std::move(r));
    }
    for (const auto& [name, loc] : rdma_loc) {
        if (rdma_used[name]) continue;
        rail r;
        r.name = r.rdma_device = name;
        r.pci = loc;
        read_rdma(root, r);
        out.push_back(std::move(r));
    }
    for (auto& r : out) {
        for (const auto& a : addresses)
            if (!r.netdev.empty() && a.interface == r.netdev)
                r.addresses.push_back(a.prefix_length >= 0 ? fmt::format("{}/{}", a.address, a.prefix_length) : a.address);
        if (r.pci) r.link = read_pcie_link(root, r.pci->bus_id);
        read_driver(root, r);
    }
    std::sort(out.begin(), out.end(), [](const rail& a, const rail& b) { return name_before(a.name, b.name); });
    return out;
}

std::string interface_of_address(const std::vector<interface_address>& addresses, const std::string& control_address) {
    if (control_address.empty() || control_address == "0.0.0.0" || control_address == "::") return {};
    for (const auto& a : addresses)
        if (a.address == control_address) return a.interface;
    return {};
}

}  // namespace meshperf::node
