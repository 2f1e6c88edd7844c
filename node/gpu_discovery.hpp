#pragma once
/// The GPUs of a node from the PCI bus under a sysfs root: NVIDIA functions (vendor 0x10de)
/// of class 3D controller (0x0302) or VGA controller (0x0300). The same list CUDA numbers,
/// without needing the driver, so a fixture tree and a node whose driver is broken both
/// show their GPUs.
#include "node/inventory.hpp"

#include <filesystem>
#include <vector>

namespace meshperf::node {

/// PCI vendor id of NVIDIA.
inline constexpr unsigned long nvidia_vendor = 0x10de;

/// Every NVIDIA GPU under SYSFS/bus/pci/devices, by bus id, with its position and link.
std::vector<gpu_entry> discover_gpus(const std::filesystem::path& sysfs_root);

}  // namespace meshperf::node
