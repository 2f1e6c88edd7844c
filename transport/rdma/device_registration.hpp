#pragma once
/// Registering device memory with the NIC (GPUDirect RDMA) by the paths
/// core::plan_gpu_registration chooses: dma-buf (ibv_reg_dmabuf_mr) first, then the
/// device pointer through nvidia-peermem (ibv_reg_mr).
#include "core/gpu_registration.hpp"
#include "transport/rdma/device_memory.hpp"
#include "transport/rdma/pd.hpp"

#include <string>

namespace meshperf::transport::rdma {

/// True when this build's rdma-core has ibv_reg_dmabuf_mr (rdma-core 34+).
bool verbs_support_dmabuf() noexcept;

/// A registration that worked.
struct device_registration {
    ibv_mr* mr = nullptr;                 ///< owned by the caller (memory_region adopts it)
    core::gpu_registration_path path = core::gpu_registration_path::dmabuf;
    std::vector<std::string> notes;       ///< why paths were left out (plan notes), for the result
};

/// Registers the whole of `memory` with pd and `access`, trying the plan's paths in order.
/// `caps` is the node's (verbs_dmabuf is set here). Throws core::spec_error with the plan's
/// words when no path can work on this node, rdma_error with each failed call's errno and
/// the fix when every attempt fails. `where` ("rxe0 cuda:0") starts the messages.
device_registration register_device_memory(const protection_domain& pd, device_allocation& memory,
                                           core::gpu_registration_caps caps, int access, const std::string& where);

}  // namespace meshperf::transport::rdma
