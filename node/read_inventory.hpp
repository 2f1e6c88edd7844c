#pragma once
/// Reading a node's inventory (inventory.hpp) from a sysfs root: the GPUs, the NICs, the
/// rail selection and each GPU's nearest rail.
#include "node/inventory.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::node {

/// What to read the inventory from.
struct inventory_input {
    std::filesystem::path sysfs_root = "/sys";
    std::vector<interface_address> addresses;  ///< the host's (host_addresses())
    rail_selection selection;
    std::string control_address;  ///< the daemon's listening IP; empty or a wildcard: none left out
    /// CUDA ordinals by bus id, when CUDA is available ({index, "0000:19:00.0"}).
    std::vector<std::pair<int, std::string>> cuda_devices;
};

/// Reads the node. Never throws for what the tree lacks: absent parts are empty and noted.
node_inventory read_inventory(const inventory_input&);

}  // namespace meshperf::node
