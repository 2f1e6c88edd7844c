#pragma once
/// What CUDA devices this node has: driver and runtime versions, and per device the name,
/// memory, PCIe bus id, NUMA node and GPUDirect capabilities. For GET /v1/info and
/// `meshperf info`. Plain C++ (no CUDA headers).
#include "gpu/status.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::gpu {

/// One CUDA device.
struct device_info {
    int index = 0;                    ///< CUDA ordinal: memory "cuda:<index>"
    std::string name;                 ///< "NVIDIA H100 80GB HBM3"
    std::string uuid;                 ///< "GPU-5a3c...", as nvidia-smi -L prints it
    std::uint64_t memory_bytes = 0;   ///< total device memory
    std::string pci_bus_id;           ///< sysfs form, "0000:17:00.0"
    int numa_node = -1;               ///< from sysfs; -1 when unknown
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int multiprocessors = 0;
    /// CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED; nullopt when the driver could not be asked.
    std::optional<bool> dma_buf_supported;
    /// cudaDevAttrGPUDirectRDMASupported (nvidia_p2p_get_pages, used by nvidia-peermem).
    bool gpudirect_rdma_supported = false;
};

/// The whole picture; devices is empty unless status.ok().
struct inventory {
    cuda_status status;
    std::vector<device_info> devices;
    bool peermem_loaded = false;      ///< module nvidia_peermem (or nv_peer_mem) is loaded
    /// Devices that could not be queried, one sentence each; the others are still listed.
    std::vector<std::string> errors;
};

/// Queries every device. Never throws for a missing driver or device: status says so.
/// Uses property and attribute queries only (no allocation, no kernel). Thread-safe; takes
/// milliseconds (call it once per request at most, or cache it).
inventory take_inventory(const std::filesystem::path& sysfs_root = "/sys");

/// Whether the nvidia_peermem (or legacy nv_peer_mem) kernel module is loaded, from
/// SYSFS/module.
bool peermem_loaded(const std::filesystem::path& sysfs_root = "/sys");

}  // namespace meshperf::gpu
