#include "gpu/registration_probe.hpp"

#include "gpu/dmabuf.hpp"
#include "gpu/inventory.hpp"
#include "gpu/status.hpp"

#include <cuda_runtime.h>
#include <sys/utsname.h>

namespace meshperf::gpu {

core::gpu_registration_caps registration_caps(int device, bool verbs_dmabuf, const std::filesystem::path& sysfs_root) {
    core::gpu_registration_caps caps;
    caps.verbs_dmabuf = verbs_dmabuf;
    caps.peermem_loaded = peermem_loaded(sysfs_root);
    utsname u{};
    if (::uname(&u) == 0) caps.kernel_dmabuf = core::kernel_supports_rdma_dmabuf(u.release);
    const auto& s = cuda_availability();
    if (!s.ok() || device < 0 || device >= s.device_count) return caps;
    caps.gpu_dmabuf = dmabuf_supported(device);
    int rdma = 0;
    if (cudaDeviceGetAttribute(&rdma, cudaDevAttrGPUDirectRDMASupported, device) == cudaSuccess)
        caps.gpudirect_rdma = rdma != 0;
    else
        (void)cudaGetLastError();
    return caps;
}

}  // namespace meshperf::gpu
