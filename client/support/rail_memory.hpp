#pragma once
/// --memory cuda:auto over rails: each rail's buffers on the GPU nearest that rail's NIC,
/// at each end, from both daemons' GET /v1/info "rails" (each rail's nearest_gpus, which the
/// daemon reads from the PCIe tree: node/read_inventory). Pure: the caller fetches the lists.
#include "core/rail_spec.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::client {

/// Which ends asked for cuda:auto (--local-memory / --remote-memory / --memory).
struct nearest_gpu_request {
    bool initiator = false;
    bool peer = false;
};

/// Sets each rail's local_memory (when `want.initiator`) and peer_memory (when `want.peer`)
/// to "cuda:N", N the CUDA index of the GPU nearest that rail's NIC on that side: among the
/// GPUs the side's /v1/info lists under the rail's nearest_gpus, the closest path first (PIX,
/// PXB, PHB, NODE, SYS), then the lowest CUDA index. Returns one line per rail with the
/// pairing ("rail ra0 -> rb0: initiator cuda:0 (0000:1b:00.0, PIX), peer cuda:0 (...)").
/// Throws core::spec_error naming the rail and the side when that side lists the rail
/// without a GPU near it (or not at all), or its GPU without a CUDA index (CUDA unusable
/// there), with what to do instead.
std::vector<std::string> assign_nearest_gpus(std::vector<core::rail_pair>& rails, const nlohmann::json& initiator_rails,
                                             const nlohmann::json& peer_rails, nearest_gpu_request want,
                                             const std::string& initiator_name, const std::string& peer_name);

}  // namespace meshperf::client
