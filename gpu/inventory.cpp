#include "gpu/inventory.hpp"

#include "gpu/detail/cuda_check.hpp"
#include "gpu/detail/driver_api.hpp"
#include "gpu/topology.hpp"

#include <fmt/format.h>
#include <system_error>

namespace meshperf::gpu {
namespace {

std::string format_uuid(const cudaUUID_t& u) {
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                       b[15]);
}

device_info query(int index, const std::filesystem::path& sysfs_root) {
    device_info d;
    d.index = index;
    cudaDeviceProp prop{};
    detail::check(cudaGetDeviceProperties(&prop, index), fmt::format("cudaGetDeviceProperties(cuda:{})", index));
    d.name = prop.name;
    d.uuid = format_uuid(prop.uuid);
    d.memory_bytes = prop.totalGlobalMem;
    d.compute_capability_major = prop.major;
    d.compute_capability_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    char bus[32] = {};
    detail::check(cudaDeviceGetPCIBusId(bus, sizeof bus, index), fmt::format("cudaDeviceGetPCIBusId(cuda:{})", index));
    d.pci_bus_id = normalize_bus_id(bus).value_or(bus);
    d.numa_node = numa_node_of(d.pci_bus_id, sysfs_root);
    int rdma = 0;
    if (cudaDeviceGetAttribute(&rdma, cudaDevAttrGPUDirectRDMASupported, index) == cudaSuccess)
        d.gpudirect_rdma_supported = rdma != 0;
    else
        (void)cudaGetLastError();
    const int dmabuf = detail::device_attribute(index, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
    if (dmabuf >= 0) d.dma_buf_supported = dmabuf != 0;
    return d;
}

}  // namespace

bool peermem_loaded(const std::filesystem::path& sysfs_root) {
    std::error_code ec;
    return std::filesystem::exists(sysfs_root / "module/nvidia_peermem", ec) ||
           std::filesystem::exists(sysfs_root / "module/nv_peer_mem", ec);
}

inventory take_inventory(const std::filesystem::path& sysfs_root) {
    inventory inv;
    inv.status = probe_cuda();
    inv.peermem_loaded = peermem_loaded(sysfs_root);
    if (!inv.status.ok()) return inv;
    for (int i = 0; i < inv.status.device_count; ++i) {
        try {
            inv.devices.push_back(query(i, sysfs_root));
        } catch (const std::system_error& e) {
            inv.errors.push_back(e.what());
        }
    }
    return inv;
}

}  // namespace meshperf::gpu
