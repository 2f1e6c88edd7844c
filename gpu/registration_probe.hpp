#pragma once
/// Fills core::gpu_registration_caps for a device from this node: the driver's dma-buf
/// attribute, the GPUDirect RDMA attribute, the kernel release and the nvidia-peermem
/// module. Whether rdma-core has ibv_reg_dmabuf_mr is the RDMA code's to say.
#include "core/gpu_registration.hpp"

#include <filesystem>

namespace meshperf::gpu {

/// Capabilities for registering memory of cuda:device with an RDMA NIC. verbs_dmabuf comes
/// from the caller (the RDMA code knows its rdma-core). Never throws; flags it cannot probe
/// are false.
core::gpu_registration_caps registration_caps(int device, bool verbs_dmabuf,
                                              const std::filesystem::path& sysfs_root = "/sys");

}  // namespace meshperf::gpu
