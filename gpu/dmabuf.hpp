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
/// needs: the fd, the buffer's offset into it, the buffer's length, and the device address
/// to use as iova. The dma-buf covers the page-aligned range containing the buffer
/// (page_aligned_range in dmabuf_range.hpp): offset is 0 when the buffer starts on a page.
struct dmabuf_export {
    dmabuf_fd fd;
    std::uint64_t offset = 0;        ///< offset of the buffer's start within the dma-buf
    std::size_t length = 0;          ///< buffer.allocated_size(): the bytes to register
    std::uint64_t iova = 0;          ///< the device pointer as an integer
    std::size_t dmabuf_length = 0;   ///< bytes the dma-buf covers (>= offset + length, whole pages)
};

/// How the driver maps the dma-buf.
enum class dmabuf_mapping {
    driver_default,  ///< flags 0
    pcie,            ///< CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE: through PCIe BAR1
};

/// Whether cuda:device can export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED).
/// False without a driver or when the attribute cannot be read.
bool dmabuf_supported(int device) noexcept;

/// Exports the whole of buffer (allocated_size()) as a dma-buf fd: the page-aligned range
/// that contains it, since cudaMalloc aligns to 256 bytes only. Throws std::system_error:
/// category cuda_category() when CUDA is unusable, cu_category() when the driver refuses
/// (CUDA_ERROR_NOT_SUPPORTED: no dma-buf support, see core::plan_gpu_registration), or
/// ENOSYS when the driver lacks cuMemGetHandleForAddressRange (older than CUDA 11.7). A
/// driver refusal of a range widened to whole pages says so in its message.
dmabuf_export export_dmabuf(const device_buffer& buffer, dmabuf_mapping mapping = dmabuf_mapping::driver_default);

}  // namespace meshperf::gpu
