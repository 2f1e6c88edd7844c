#pragma once
/// How GPU memory gets registered with an RDMA NIC (GPUDirect RDMA): the choice between
/// dma-buf (cuMemGetHandleForAddressRange -> ibv_reg_dmabuf_mr) and the nvidia-peermem
/// fallback (ibv_reg_mr on the device pointer), made from capability flags. Pure: the flags
/// are probed elsewhere (gpu/registration_probe.hpp, the RDMA code); nothing here does I/O.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// A way to register GPU memory with the NIC.
enum class gpu_registration_path {
    dmabuf,   ///< dma-buf fd from the CUDA driver, ibv_reg_dmabuf_mr
    peermem,  ///< ibv_reg_mr on the device pointer, served by the nvidia-peermem module
};

/// What the user asked for (--gpu-registration auto|dmabuf|peermem).
enum class gpu_registration_preference { automatic, dmabuf, peermem };

/// What this node can do. Every flag defaults to "no", so a flag nobody probed never
/// selects a path.
struct gpu_registration_caps {
    bool gpu_dmabuf = false;      ///< CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on the buffer's GPU
    bool verbs_dmabuf = false;    ///< rdma-core provides ibv_reg_dmabuf_mr (rdma-core 34+)
    bool kernel_dmabuf = false;   ///< Linux 5.12+ (kernel_supports_rdma_dmabuf)
    bool peermem_loaded = false;  ///< module nvidia_peermem (or legacy nv_peer_mem) is loaded
    bool gpudirect_rdma = false;  ///< CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED on the GPU
};

/// The paths to try, in order, or why none can work.
struct gpu_registration_plan {
    /// Paths to attempt in this order; the RDMA code tries the next one when a registration
    /// call fails. Empty when no path can work: then error says why and names the fix.
    std::vector<gpu_registration_path> attempts;
    std::string error;
    /// Why a path was left out although the preference allowed it; for the result's warnings.
    std::vector<std::string> notes;
};

/// The outcome of one failed registration attempt, for explain_registration_failure.
struct gpu_registration_failure {
    gpu_registration_path path = gpu_registration_path::dmabuf;
    int error_number = 0;  ///< errno left by ibv_reg_dmabuf_mr / ibv_reg_mr, or 0
};

/// "dmabuf" or "peermem": the name the result states as the path used.
std::string_view to_string(gpu_registration_path);

/// Parses "auto", "dmabuf" or "peermem"; throws spec_error naming the accepted values.
gpu_registration_preference parse_gpu_registration_preference(std::string_view);

/// True when a kernel release string (uname -r: "5.15.0-91-generic", "6.1.0-13-amd64")
/// is Linux 5.12 or newer, the first with RDMA dma-buf support. False when unparsable.
bool kernel_supports_rdma_dmabuf(std::string_view release);

/// Chooses the registration paths: dma-buf first when the GPU, the kernel and rdma-core all
/// support it, then nvidia-peermem when the module is loaded and the GPU supports GPUDirect
/// RDMA. A preference other than automatic allows only that path.
gpu_registration_plan plan_gpu_registration(const gpu_registration_caps& caps,
                                            gpu_registration_preference preference);

/// The error message when every attempt of a plan failed at registration time: each
/// attempt's call and errno, then the fix (load nvidia-peermem, or a dma-buf capable driver).
std::string explain_registration_failure(const gpu_registration_caps& caps,
                                         const std::vector<gpu_registration_failure>& failures);

/// What trying a plan's paths gave: the path that registered the memory (none when every
/// attempt failed) and each failed attempt, in order.
struct gpu_registration_outcome {
    std::optional<gpu_registration_path> used;
    std::vector<gpu_registration_failure> failures;
};

/// Tries plan.attempts in order with `attempt`, which registers the memory by one path and
/// returns 0, or the errno of the call that failed (never 0 on failure); stops at the first
/// success.
gpu_registration_outcome try_registration_paths(const gpu_registration_plan& plan,
                                                const std::function<int(gpu_registration_path)>& attempt);

}  // namespace meshperf::core
