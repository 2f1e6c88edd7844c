#pragma once
/// The node as the unit: its GPUs, its rails (the NICs that carry traffic) and which GPU is
/// nearest which rail in the PCIe tree, all read from a sysfs root that tests point at a
/// fixture tree. The host's addresses come in as a list (host_addresses.hpp reads them), so
/// everything here runs on a fake tree.
#include "gpu/topology.hpp"
#include "node/pci_path.hpp"
#include "node/pcie_link.hpp"
#include "node/pcie_path_links.hpp"

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::node {

/// One address of an interface (getifaddrs).
struct interface_address {
    std::string interface;  ///< "enp24s0np0"
    std::string address;    ///< "192.168.1.5", "fe80::1"
    int prefix_length = -1; ///< 24; -1 when unknown
    bool up = false;        ///< IFF_UP
    bool loopback = false;  ///< IFF_LOOPBACK
};

/// Which NICs are rails: the [rails] table of the daemon's configuration. Patterns are
/// shell globs (fnmatch) matched against the netdev name and the RDMA device name.
struct rail_selection {
    /// Empty: every up interface with an address except loopback and the control
    /// interface (when others exist). Otherwise: exactly the NICs one pattern matches,
    /// whatever their addresses.
    std::vector<std::string> include;
    std::vector<std::string> exclude;  ///< applied after include, or after the default
};

/// Why `pattern` is not a rail pattern (empty, over 64 characters, a space or a slash),
/// in words naming the pattern and what to give; empty when it is one. The daemon's [rails]
/// table and `inspect --rails-include/--rails-exclude` apply the same rule.
std::string rail_pattern_problem(const std::string& pattern);

/// A GPU found on the PCI bus.
struct gpu_entry {
    std::string bus_id;                     ///< "0000:19:00.0"
    std::string device_id;                  ///< PCI device id, "0x2330"
    std::optional<gpu::pci_location> pci;   ///< where it sits
    std::optional<int> cuda_index;          ///< the CUDA ordinal, when the caller knows it
    pcie_link link;
    /// Index into node_inventory::rails: the closest path; equally close, the rail with the
    /// fewest GPUs so far, then the lowest bus id.
    std::optional<std::size_t> nearest_rail;
    pci_path nearest_path = pci_path::unknown;
    std::vector<std::size_t> equally_near;    ///< every rail at nearest_path, nearest_rail among them
};

/// A NIC that carries traffic.
struct rail {
    std::string name;         ///< the netdev, or the RDMA device when it has none
    std::string netdev;       ///< "enp24s0np0"; empty for an RDMA device without one
    std::string rdma_device;  ///< "mlx5_0"; empty without RDMA
    int rdma_port = 0;        ///< 1-based port; 0 without RDMA
    std::string link_layer;   ///< "InfiniBand", "Ethernet"; empty when unknown
    std::vector<std::string> addresses;  ///< "192.168.1.5/24"
    std::optional<int> mtu;
    std::optional<double> rate_gbit;     ///< the RDMA port rate, else the netdev speed
    std::string rate_source;             ///< "rdma port rate", "netdev speed"
    std::optional<bool> link_up;         ///< RDMA port ACTIVE / operstate up; empty when unknown
    std::string state_text;              ///< what the kernel says: "4: ACTIVE", "up"
    std::string firmware;                ///< RDMA fw_ver; empty when unreadable
    /// The kernel driver: basename of SYSFS/class/net/IF/device/driver (of the RDMA
    /// device's or the PCI function's without a netdev), "mlx5_core"; empty when unknown.
    std::string driver;
    /// SYSFS/module/MODULE/version of that driver ("24.10-1.1.4"), as out-of-tree drivers
    /// (MLNX_OFED, DOCA) declare it; empty when the module has none (in-tree drivers usually
    /// have none) or it is unreadable: unknown, never guessed.
    std::string driver_version;
    std::optional<gpu::pci_location> pci;  ///< empty for a virtual interface
    pcie_link link;
    std::vector<std::size_t> nearest_gpus;  ///< GPUs whose nearest_rail this is
};

/// What a node has.
struct node_inventory {
    std::filesystem::path sysfs_root;
    std::vector<gpu_entry> gpus;  ///< by bus id
    std::vector<rail> rails;      ///< by name, numbers in names counted ("enp21s0" before "enp149s0")
    std::string gpu_driver;       ///< SYSFS/module/nvidia/version; empty when unreadable
    /// The PCIe links from each GPU and rail NIC up to its root complex, each once: the
    /// switches' uplinks and the devices' own links with the ports above them.
    std::vector<pcie_path_link> path_links;
    std::string control_interface;  ///< the interface left out as the control address's
    std::vector<std::string> notes; ///< what could not be read, one sentence each
};

/// {"gpus": [...], "rails": [...], "gpu_driver": ..., "pcie_path_links": [...]}: each rail
/// with its nearest GPUs and the PCIe path in NCCL's words, each GPU with its nearest rail,
/// each PCIe link on their paths with both ends ({"above", "below", "bridge_below",
/// "above_link", "below_link", "behind"}).
nlohmann::json to_json(const node_inventory&);

/// The rails alone, as GET /v1/info lists them.
nlohmann::json rails_json(const node_inventory&);

/// Each GPU with its nearest rail: [{"gpu": bus id, "cuda_index", "rail", "path"}].
nlohmann::json pairing_json(const node_inventory&);

}  // namespace meshperf::node
