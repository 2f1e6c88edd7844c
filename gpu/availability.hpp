#pragma once
/// Whether CUDA can run on this node, and if not, why: no NVIDIA driver, a driver too old
/// for the CUDA runtime meshperf was built with, no device, or another driver failure.
/// The lowest layer of gpu/: the error categories (error.hpp) word availability errors with
/// its sentence. Plain C++ (no CUDA headers); callers include it through status.hpp.
#include <string>
#include <string_view>

namespace meshperf::gpu {

/// The outcome of probing CUDA.
enum class cuda_state {
    ok,              ///< at least one device is usable
    no_driver,       ///< libcuda.so.1 is absent (cudaDriverGetVersion reports 0)
    driver_too_old,  ///< cudaErrorInsufficientDriver (35) with a driver present
    no_device,       ///< cudaErrorNoDevice (100), or zero devices
    unavailable,     ///< any other failure of the driver (mismatch, not ready, ...)
};

/// "ok", "no_driver", "driver_too_old", "no_device", "unavailable": the JSON spelling.
std::string_view to_string(cuda_state);

/// What a probe found.
struct cuda_status {
    cuda_state state = cuda_state::unavailable;
    int driver_version = 0;   ///< CUDA version the driver supports (12080 = 12.8); 0: no driver
    int runtime_version = 0;  ///< CUDA runtime meshperf carries (13000 = 13.0)
    int device_count = 0;     ///< devices visible to this process
    int error = 0;            ///< cudaError_t of cudaGetDeviceCount; 0 on success
    /// Empty when ok; otherwise one sentence for an operator: what is wrong and what to do.
    /// Starts with "no NVIDIA driver", "NVIDIA driver too old for this CUDA runtime",
    /// "no CUDA device" or "CUDA unavailable".
    std::string message;

    bool ok() const noexcept { return state == cuda_state::ok; }
};

/// Formats a CUDA version number: 12080 -> "12.8", 13000 -> "13.0".
std::string format_cuda_version(int version);

/// Classifies the results of cudaDriverGetVersion, cudaRuntimeGetVersion and
/// cudaGetDeviceCount. Pure: error_text is the runtime's description of count_error
/// (cudaGetErrorName + cudaGetErrorString), used only for errors without a specific message.
cuda_status classify_cuda(int driver_version, int runtime_version, int count_error, int device_count,
                          std::string_view error_text = {});

/// Probes CUDA now. Never throws for a missing driver or device: that is the result.
/// Thread-safe.
cuda_status probe_cuda();

/// The first probe's result, cached for the life of the process (a driver does not appear
/// or go away under a running process). Thread-safe.
const cuda_status& cuda_availability();

}  // namespace meshperf::gpu
