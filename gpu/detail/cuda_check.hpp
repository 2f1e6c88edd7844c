#pragma once
/// Private to gpu/: turns a failed runtime call into std::system_error. Includes the CUDA
/// runtime header, so public headers never include this one.
#include "gpu/error.hpp"

#include <cuda_runtime.h>
#include <string>
#include <type_traits>

namespace meshperf::gpu::detail {

/// Throws std::system_error naming the operation unless e is cudaSuccess. Clears the
/// runtime's last-error state first, so a non-sticky error does not leak into later calls.
inline void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();
    throw_cuda_error(static_cast<int>(e), what);
}

inline void check(cudaError_t e, const std::string& what) { check(e, what.c_str()); }

/// The same, naming the operation by `describe()` only when it failed: for calls made per
/// message, where formatting the name every time would allocate on the data path.
template <class Describe>
    requires std::is_invocable_r_v<std::string, Describe>
inline void check(cudaError_t e, Describe describe) {
    if (e == cudaSuccess) return;
    check(e, describe());
}

/// Makes device current for the calling thread after require_device (gpu/status.hpp);
/// throws naming the device. Defined in status.cpp, beside require_device.
void set_device(int device);

}  // namespace meshperf::gpu::detail
