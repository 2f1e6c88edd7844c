#pragma once
/// Private to gpu/: driver-API functions reached through cudaGetDriverEntryPointByVersion,
/// so no binary links libcuda and one binary starts on nodes without a driver.
#include <cuda.h>
#include <cudaTypedefs.h>

namespace meshperf::gpu::detail {

/// Driver entry points, resolved once per process. A member is null when no driver is
/// loaded or the driver lacks the symbol at the requested ABI version.
struct driver_api {
    PFN_cuInit_v2000 init = nullptr;
    PFN_cuDeviceGet_v2000 device_get = nullptr;
    PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
    PFN_cuMemGetHandleForAddressRange_v11070 mem_get_handle_for_address_range = nullptr;
    PFN_cuPointerSetAttribute_v6000 pointer_set_attribute = nullptr;
    PFN_cuGetErrorName_v6000 get_error_name = nullptr;
    PFN_cuGetErrorString_v6000 get_error_string = nullptr;
};

/// The resolved entry points. Thread-safe; resolves on first call.
const driver_api& driver();

/// A driver attribute of a runtime device ordinal, or -1 when it cannot be read (no
/// driver, no entry point, or the call fails).
int device_attribute(int device, CUdevice_attribute attribute) noexcept;

}  // namespace meshperf::gpu::detail
