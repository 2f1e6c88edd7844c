#include "gpu/availability.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace meshperf::gpu {
namespace {

// The classifier is pure and takes plain ints; pin them to the runtime's values.
constexpr int err_initialization = 3;
constexpr int err_insufficient_driver = 35;
constexpr int err_no_device = 100;
constexpr int err_driver_mismatch = 803;
static_assert(err_initialization == cudaErrorInitializationError);
static_assert(err_insufficient_driver == cudaErrorInsufficientDriver);
static_assert(err_no_device == cudaErrorNoDevice);
static_assert(err_driver_mismatch == cudaErrorSystemDriverMismatch);

std::string driver_hint(int runtime_version) {
    // CUDA 13.x needs an R580 driver, CUDA 12.x an R525 one (per the CUDA release notes).
    if (runtime_version / 1000 == 13) return " (R580 or newer)";
    if (runtime_version / 1000 == 12) return " (R525 or newer)";
    return "";
}

}  // namespace

std::string_view to_string(cuda_state s) {
    switch (s) {
    case cuda_state::ok: return "ok";
    case cuda_state::no_driver: return "no_driver";
    case cuda_state::driver_too_old: return "driver_too_old";
    case cuda_state::no_device: return "no_device";
    case cuda_state::unavailable: return "unavailable";
    }
    return "unavailable";
}

std::string format_cuda_version(int version) {
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

cuda_status classify_cuda(int driver_version, int runtime_version, int count_error, int device_count,
                          std::string_view error_text) {
    cuda_status s;
    s.driver_version = driver_version;
    s.runtime_version = runtime_version;
    s.error = count_error;
    s.device_count = count_error == 0 ? device_count : 0;
    const std::string rt = format_cuda_version(runtime_version);
    if (driver_version == 0) {
        // No libcuda.so.1 at all; the runtime reports this as cudaErrorInsufficientDriver too.
        s.state = cuda_state::no_driver;
        s.message = "no NVIDIA driver: libcuda.so.1 could not be loaded (cudaDriverGetVersion reports 0); "
                    "install the NVIDIA driver, or measure with --memory host";
    } else if (count_error == err_insufficient_driver) {
        s.state = cuda_state::driver_too_old;
        s.message = fmt::format(
            "NVIDIA driver too old for this CUDA runtime: the driver supports CUDA {}, meshperf was built "
            "with CUDA {}; install a driver for CUDA {} or newer{}",
            format_cuda_version(driver_version), rt, rt, driver_hint(runtime_version));
    } else if (count_error == err_no_device || (count_error == 0 && device_count <= 0)) {
        s.state = cuda_state::no_device;
        s.message = fmt::format(
            "no CUDA device: the NVIDIA driver (CUDA {}) is loaded but reports no GPU; check nvidia-smi, "
            "CUDA_VISIBLE_DEVICES and the permissions of /dev/nvidia*",
            format_cuda_version(driver_version));
    } else if (count_error == err_driver_mismatch) {
        s.state = cuda_state::unavailable;
        s.message = "CUDA unavailable: the NVIDIA kernel module and the user-space driver (libcuda) have "
                    "different versions; reload the nvidia module or reboot after the driver update";
    } else if (count_error != 0) {
        s.state = cuda_state::unavailable;
        s.message = fmt::format("CUDA unavailable: cudaGetDeviceCount failed with error {}{}{}; check "
                                "nvidia-smi and dmesg",
                                count_error, error_text.empty() ? "" : ": ", error_text);
    } else {
        s.state = cuda_state::ok;
    }
    return s;
}

cuda_status probe_cuda() {
    int driver = 0, runtime = 0, count = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    const cudaError_t e = cudaGetDeviceCount(&count);
    std::string text;
    if (e != cudaSuccess) {
        text = fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
    return classify_cuda(driver, runtime, static_cast<int>(e), count, text);
}

const cuda_status& cuda_availability() {
    static const cuda_status status = probe_cuda();
    return status;
}

}  // namespace meshperf::gpu
