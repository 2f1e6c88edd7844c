#include "gpu/detail/driver_api.hpp"

#include <cuda_runtime.h>

namespace meshperf::gpu::detail {
namespace {

// Asks for the symbol at the ABI version of the PFN typedef we call it through, so a newer
// driver hands back a function with the signature we expect.
template <typename Fn>
void resolve(const char* symbol, unsigned version, Fn& out) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        out = reinterpret_cast<Fn>(fn);
    else
        (void)cudaGetLastError();
}

driver_api load() {
    driver_api api;
    int version = 0;
    if (cudaDriverGetVersion(&version) != cudaSuccess || version == 0) return api;  // no libcuda
    resolve("cuGetErrorName", 6000, api.get_error_name);
    resolve("cuGetErrorString", 6000, api.get_error_string);
    resolve("cuInit", 2000, api.init);
    // The driver API needs cuInit before cuDeviceGet; it is idempotent and creates no context.
    if (!api.init || api.init(0) != CUDA_SUCCESS) return api;
    resolve("cuDeviceGet", 2000, api.device_get);
    resolve("cuDeviceGetAttribute", 2000, api.device_get_attribute);
    resolve("cuMemGetHandleForAddressRange", 11070, api.mem_get_handle_for_address_range);
    resolve("cuPointerSetAttribute", 6000, api.pointer_set_attribute);
    return api;
}

}  // namespace

const driver_api& driver() {
    static const driver_api api = load();
    return api;
}

int device_attribute(int device, CUdevice_attribute attribute) noexcept {
    const auto& api = driver();
    if (!api.device_get || !api.device_get_attribute) return -1;
    CUdevice dev{};
    if (api.device_get(&dev, device) != CUDA_SUCCESS) return -1;
    int value = 0;
    if (api.device_get_attribute(&value, attribute, dev) != CUDA_SUCCESS) return -1;
    return value;
}

}  // namespace meshperf::gpu::detail
