#pragma once
/// PCIe topology from sysfs: where a GPU and a NIC sit in the PCIe tree, and whether they
/// share a root complex (GPUDirect RDMA and staged copies are fastest when they share a
/// PCIe switch; crossing root complexes, worse still sockets, costs bandwidth).
/// Plain C++; every function takes the sysfs root so tests run on a fake tree.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::gpu {

/// Where one PCI function sits.
struct pci_location {
    std::string bus_id;                ///< sysfs form, "0000:17:00.0"
    std::string root_complex;          ///< host bridge directory, "pci0000:16"
    std::vector<std::string> bridges;  ///< PCI functions from the root port down to the device, excluded
    int numa_node = -1;                ///< from sysfs numa_node; -1 when the kernel does not know
    std::string sysfs_path;            ///< resolved device directory
};

/// Normalizes a PCI bus id as CUDA or nvidia-smi print it ("00000000:17:00.0",
/// "0000:B1:00.0", "17:00.0") to the sysfs form: lowercase, domain of at least 4 hex digits.
/// Returns nullopt when the text is not DOMAIN:BUS:DEV.FN or BUS:DEV.FN in hex.
std::optional<std::string> normalize_bus_id(std::string_view bus_id);

/// Reads DIR/numa_node for a PCI function; -1 when absent or unreadable.
int numa_node_of(std::string_view bus_id, const std::filesystem::path& sysfs_root = "/sys");

/// Locates a PCI function by bus id through SYSFS/bus/pci/devices/<id>. Nullopt when the id
/// is malformed or absent.
std::optional<pci_location> locate_pci_device(std::string_view bus_id,
                                              const std::filesystem::path& sysfs_root = "/sys");

/// Locates the PCI function behind a network interface (SYSFS/class/net/<ifname>/device).
/// Nullopt for virtual interfaces (lo, bonds, bridges, veth), which have no device.
std::optional<pci_location> locate_net_interface(std::string_view ifname,
                                                 const std::filesystem::path& sysfs_root = "/sys");

/// Locates the PCI function behind an RDMA device (SYSFS/class/infiniband/<name>/device).
std::optional<pci_location> locate_rdma_device(std::string_view name,
                                               const std::filesystem::path& sysfs_root = "/sys");

/// Locates a NIC given as an RDMA device name (mlx5_0) or a network interface (eth0): the
/// RDMA name is tried first.
std::optional<pci_location> locate_nic(std::string_view name, const std::filesystem::path& sysfs_root = "/sys");

/// How two PCI functions relate, closest first (NCCL calls these PIX/PXB, PHB, NODE, SYS).
enum class pci_relation {
    same_switch,             ///< share a PCIe bridge below the root complex
    same_root_complex,       ///< different root ports of one host bridge
    same_numa_node,          ///< different root complexes on one NUMA node
    cross_numa,              ///< different NUMA nodes: traffic crosses the socket interconnect
    different_root_complex,  ///< different root complexes, NUMA node unknown
    unknown,                 ///< one of them could not be located
};

/// "same_switch", "same_root_complex", "same_numa_node", "cross_numa",
/// "different_root_complex", "unknown": the JSON spelling.
std::string_view to_string(pci_relation);

/// The relationship of a GPU and a NIC, for a result.
struct pci_affinity {
    pci_relation relation = pci_relation::unknown;
    bool shares_root_complex = false;  ///< same_switch or same_root_complex
    /// One sentence describing the relation (always set).
    std::string description;
    /// Set when they do not share a root complex: the result's warning.
    std::string warning;
};

/// Compares two located functions; gpu_name / nic_name ("cuda:0", "mlx5_0") appear in the
/// sentences.
pci_affinity compare_locations(const pci_location& gpu, const pci_location& nic, std::string_view gpu_name,
                               std::string_view nic_name);

/// Locates a GPU by bus id and a NIC by name (see locate_nic) and compares them. When either
/// cannot be located, relation is unknown, warning is empty and description says which.
pci_affinity gpu_nic_affinity(std::string_view gpu_bus_id, std::string_view gpu_name, std::string_view nic_name,
                              const std::filesystem::path& sysfs_root = "/sys");

}  // namespace meshperf::gpu
