#pragma once
/// dma-buf export of device memory for GPUDirect RDMA: the fd that ibv_reg_dmabuf_mr
/// registers. The driver call (cuMemGetHandleForAddressRange) is reached through
/// cudaGetDriverEntryPointByVersion; libcuda is never linked. Plain C++.
#include "gpu/buffer.hpp"

#include <cstddef>
#include <cstdint>

namespace meshperf::gpu {

/// Owns a dma-buf file descriptor; closes it on destruction. Move-only. The RDMA code may
/// close it once the memory region is registered (the MR keeps its own reference).
class dmabuf_fd {
public:
    dmabuf_fd() = default;
    explicit dmabuf_fd(int fd) noexcept : fd_(fd) {}
    dmabuf_fd(dmabuf_fd&& o) noexcept : fd_(o.release()) {}
    dmabuf_fd& operator=(dmabuf_fd&& o) noexcept;
    dmabuf_fd(const dmabuf_fd&) = delete;
    dmabuf_fd& operator=(const dmabuf_fd&) = delete;
    ~dmabuf_fd();

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    /// Gives up ownership and returns the descriptor.
    int release() noexcept {
        const int f = fd_;
        fd_ = -1;
        return f;
    }

private:
    int fd_ = -1;
};

/// An exported range, with what ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access)
/// needs: the fd, offset 0 into it, the length, and the device address to use as iova.
struct dmabuf_export {
    dmabuf_fd fd;
    std::uint64_t offset = 0;   ///< offset of the buffer's start within the dma-buf
    std::size_t length = 0;     ///< buffer.allocated_size(): a multiple of the host page size
    std::uint64_t iova = 0;     ///< the device pointer as an integer
};

/// How the driver maps the dma-buf.
enum class dmabuf_mapping {
    driver_default,  ///< flags 0
    pcie,            ///< CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE: through PCIe BAR1
};

/// Whether cuda:device can export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED).
/// False without a driver or when the attribute cannot be read.
bool dmabuf_supported(int device) noexcept;

/// Exports the whole of buffer (allocated_size()) as a dma-buf fd. Throws std::system_error:
/// category cuda_category() when CUDA is unusable, cu_category() when the driver refuses
/// (CUDA_ERROR_NOT_SUPPORTED: no dma-buf support, see core::plan_gpu_registration), or
/// ENOSYS when the driver lacks cuMemGetHandleForAddressRange (older than CUDA 11.7).
dmabuf_export export_dmabuf(const device_buffer& buffer, dmabuf_mapping mapping = dmabuf_mapping::driver_default);

}  // namespace meshperf::gpu
