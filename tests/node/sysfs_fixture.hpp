#pragma once
/// A DGX-H100-like sysfs tree for tests: 2 NUMA nodes, 2 root complexes each, one PCIe
/// switch per root complex holding 2 GPUs and 2 NICs (8 GPUs, 8 RoCE NICs at 400 Gbit/s),
/// plus a management NIC (eno1) and loopback. The same shape as the kernel's: devices/
/// holds the PCI hierarchy; bus/pci/devices and class/{net,infiniband} hold relative links
/// into it. The one generator both the unit tests and the integration test use
/// (tests/node/make_sysfs_fixture for the latter).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace meshperf::test_fixture {

/// A PCI function's link as its four sysfs files hold it.
struct link_values {
    int width = 16, max_width = 16;
    double gts = 32, max_gts = 32;
};

/// Faults to build in.
struct fixture_options {
    bool root_config = true;        ///< config files of 4096 bytes (what root reads); false: 64 bytes
    std::string narrow_gpu;         ///< bus id of a GPU trained at x8 of x16
    std::string slow_nic;           ///< bus id of a NIC at 16 of 32 GT/s
    std::string acs_bridge;         ///< bus id of a bridge with ACS P2P request/completion redirect on
    std::string down_rail;          ///< netdev whose RDMA port is DOWN
    /// Bus id of a switch's upstream port whose uplink (it and the root port above, both
    /// ends of the one link) trained at x8 of x16.
    std::string narrow_uplink;
    /// SYSFS/module/mlx5_core/version, as an out-of-tree (MLNX_OFED, DOCA) driver has it;
    /// empty: none, as the in-tree driver.
    std::string nic_driver_version;
    /// Any function's link by bus id, applied last (over the faults above).
    std::map<std::string, link_values> links;
};

/// One switch's devices, by bus id.
struct switch_devices {
    int numa = 0;
    std::string root_complex, root_port, upstream;
    std::vector<std::string> downstream;  ///< 4 ports: GPU A, GPU B, NIC A, NIC B
    std::string gpu_a, gpu_b, nic_a, nic_b;
    std::string netdev_a, netdev_b, rdma_a, rdma_b;
};

/// The 4 switches, in bus order.
std::vector<switch_devices> dgx_switches();

/// Builds the tree under `root` (created; must not hold a tree already).
void build_dgx_h100(const std::filesystem::path& root, const fixture_options& options = {});

}  // namespace meshperf::test_fixture
