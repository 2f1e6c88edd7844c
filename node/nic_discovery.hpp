#pragma once
/// The NICs of a node from sysfs, before the rail selection: every network interface of
/// SYSFS/class/net (physical or virtual) and every RDMA device of SYSFS/class/infiniband
/// that has no network interface, each with what the kernel says about it. A netdev and
/// an RDMA device are one NIC when their `device` links reach the same PCI function.
#include "node/inventory.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace meshperf::node {

/// Every NIC under `sysfs_root`, by name, with its addresses from `addresses`.
std::vector<rail> discover_nics(const std::filesystem::path& sysfs_root, const std::vector<interface_address>& addresses);

/// The interface that holds `control_address` (exact text), or "" (none, or a wildcard).
std::string interface_of_address(const std::vector<interface_address>& addresses, const std::string& control_address);

/// The rails among `nics` (see rail_selection). `notes` receives a sentence for each
/// include pattern that matched nothing and for the control interface left out.
std::vector<rail> select_rails(std::vector<rail> nics, const rail_selection& selection,
                               const std::vector<interface_address>& addresses, const std::string& control_interface,
                               std::vector<std::string>& notes);

}  // namespace meshperf::node
