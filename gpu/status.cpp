#include "gpu/status.hpp"

#include "gpu/detail/cuda_check.hpp"
#include "gpu/error.hpp"

#include <fmt/format.h>

namespace meshperf::gpu {

void require_device(int device) {
    const auto& s = cuda_availability();
    if (!s.ok()) {
        const int code = s.error != 0 ? s.error : static_cast<int>(cudaErrorNoDevice);
        throw std::system_error(make_cuda_error_code(code), fmt::format("cuda:{}", device));
    }
    if (device < 0 || device >= s.device_count)
        throw std::system_error(make_cuda_error_code(cudaErrorInvalidDevice),
                                fmt::format("cuda:{} does not exist: this node has {} CUDA device{} (cuda:0..cuda:{})",
                                            device, s.device_count, s.device_count == 1 ? "" : "s",
                                            s.device_count - 1));
}

namespace detail {
void set_device(int device) {
    require_device(device);
    check(cudaSetDevice(device), fmt::format("cudaSetDevice(cuda:{})", device));
}
}  // namespace detail

}  // namespace meshperf::gpu
