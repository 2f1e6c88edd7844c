#pragma once
/// JSON form of the GPU inventory, the "cuda" member of GET /v1/info. Compiled by the host
/// compiler (nlohmann stays out of .cu files).
#include "gpu/inventory.hpp"

#include <nlohmann/json.hpp>

namespace meshperf::gpu {

/// {"available", "status", "message", "driver_version", "runtime_version", "device_count",
///  "nvidia_peermem_loaded", "devices": [{"index", "memory", "name", "uuid", "memory_bytes",
///  "pci_bus_id", "numa_node", "compute_capability", "multiprocessors", "dma_buf_supported",
///  "gpudirect_rdma_supported"}], "errors"}. Versions are "12.8" strings, null without a
/// driver; numa_node and dma_buf_supported are null when unknown. Documented in docs/gpu.md.
nlohmann::json to_json(const inventory&);
nlohmann::json to_json(const device_info&);

}  // namespace meshperf::gpu
