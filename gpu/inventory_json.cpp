#include "gpu/inventory_json.hpp"

#include <fmt/format.h>

namespace meshperf::gpu {

nlohmann::json to_json(const device_info& d) {
    nlohmann::json j;
    j["index"] = d.index;
    j["memory"] = fmt::format("cuda:{}", d.index);
    j["name"] = d.name;
    j["uuid"] = d.uuid;
    j["memory_bytes"] = d.memory_bytes;
    j["pci_bus_id"] = d.pci_bus_id;
    j["numa_node"] = d.numa_node >= 0 ? nlohmann::json(d.numa_node) : nlohmann::json(nullptr);
    j["compute_capability"] = fmt::format("{}.{}", d.compute_capability_major, d.compute_capability_minor);
    j["multiprocessors"] = d.multiprocessors;
    j["dma_buf_supported"] = d.dma_buf_supported ? nlohmann::json(*d.dma_buf_supported) : nlohmann::json(nullptr);
    j["gpudirect_rdma_supported"] = d.gpudirect_rdma_supported;
    return j;
}

nlohmann::json to_json(const inventory& inv) {
    nlohmann::json j;
    j["available"] = inv.status.ok();
    j["status"] = std::string(to_string(inv.status.state));
    j["message"] = inv.status.message;
    j["driver_version"] =
        inv.status.driver_version > 0 ? nlohmann::json(format_cuda_version(inv.status.driver_version)) : nlohmann::json(nullptr);
    j["runtime_version"] = format_cuda_version(inv.status.runtime_version);
    j["device_count"] = inv.status.device_count;
    j["nvidia_peermem_loaded"] = inv.peermem_loaded;
    j["devices"] = nlohmann::json::array();
    for (const auto& d : inv.devices) j["devices"].push_back(to_json(d));
    j["errors"] = inv.errors;
    return j;
}

}  // namespace meshperf::gpu
