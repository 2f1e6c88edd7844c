#pragma once
/// The PCIe links between each GPU or rail NIC and its root complex, each link once, as both
/// of its ends show it. A switch whose uplink trained at x8 throttles every GPU and NIC
/// behind it while their own links read x16, so inspect checks these links too.
///
/// Along a device's bridges (gpu::pci_location::bridges: the root port first, then each
/// switch's upstream and downstream port) the ports pair up by position: the root port and
/// each switch's downstream port face down, and their link goes to the function right below
/// (the next switch's upstream port, or the device itself). So the links of a path are its
/// (bridges + device) taken two by two from the root port.
#include "gpu/topology.hpp"
#include "node/pcie_link.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace meshperf::node {

/// One PCIe link on the way from GPUs or rail NICs up to their root complex.
struct pcie_path_link {
    std::string above;       ///< bus id of the port facing down: a root port or a switch's downstream port
    std::string below;       ///< bus id of the function right below: a switch's upstream port, or a GPU or NIC
    pcie_link above_link;    ///< what `above`'s sysfs files say (has_attributes false: no PCIe port)
    pcie_link below_link;    ///< what `below`'s say
    bool bridge_below = false;  ///< `below` is a switch's upstream port (a switch uplink), not a GPU or NIC
    /// The GPUs and rail NICs whose path crosses it, as findings name them ("GPU
    /// 0000:13:00.0", "rail enp21s0np0"), in the order given.
    std::vector<std::string> behind;
};

/// A GPU or rail NIC whose path to the root is read.
struct path_device {
    std::string label;  ///< "GPU 0000:13:00.0", "rail enp21s0np0"
    gpu::pci_location pci;
};

/// Every link on the devices' paths, each once, in the order first met (each path from the
/// root down). A link whose lower end has no link attributes is not a PCIe link and is left
/// out. Reads SYSFS/bus/pci/devices/BUS_ID/*_link_* once per function.
std::vector<pcie_path_link> read_path_links(const std::filesystem::path& sysfs_root, const std::vector<path_device>& devices);

/// The link whose lower end is `bus_id` (a GPU's or NIC's own link with the port above it),
/// or null.
const pcie_path_link* link_below(const std::vector<pcie_path_link>& links, const std::string& bus_id);

/// `own`, the link of the function `bus_id` (a GPU, a NIC, a switch's upstream port), as
/// far as the port above it allows (capped_by), where that port is known and has a link.
pcie_link as_far_as_port_allows(const std::vector<pcie_path_link>& links, const std::string& bus_id, const pcie_link& own);

}  // namespace meshperf::node
