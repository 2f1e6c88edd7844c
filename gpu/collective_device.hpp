#pragma once
/// One size of a collective run in GPU memory (transport/mesh/device_memory.hpp): the
/// rank's send and receive buffers and the reduction scratch on one GPU, the copies between
/// them and host staging, and the element-wise sum (a CUDA kernel, rounding as
/// core::reduce_sum). Plain C++ (no CUDA headers). Every call waits for its work: the
/// collective's step times include the staging.
#include "core/collective/dtype.hpp"
#include "gpu/buffer.hpp"

#include <cstddef>
#include <memory>

namespace meshperf::gpu {

/// The three device buffers of a size; one CUDA stream. Used by one thread.
class collective_device {
public:
    enum class region { send, recv, scratch };

    /// Allocates the buffers (a size of 0 allocates nothing) on cuda:device. Throws
    /// std::system_error naming the device and size.
    collective_device(int device, std::size_t send_bytes, std::size_t recv_bytes, std::size_t scratch_bytes);
    ~collective_device();
    collective_device(const collective_device&) = delete;
    collective_device& operator=(const collective_device&) = delete;

    /// n bytes of host memory into `r` at `offset`. Throws std::system_error, or
    /// std::invalid_argument past the buffer's end.
    void upload(region r, std::size_t offset, const void* host, std::size_t n);
    /// n bytes of `r` at `offset` into host memory.
    void download(void* host, region r, std::size_t offset, std::size_t n);
    /// n bytes within the device, from `src` at src_offset to `dst` at dst_offset.
    void copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n);
    /// acc[i] += in[i] over n bytes of whole `type` elements, on the GPU.
    void add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset, std::size_t n);

    // The same at device addresses of this GPU, which may lie outside the three buffers (an
    // RDMA receive slot): for GPUDirect RDMA. Unchecked: the caller keeps them in bounds.
    void upload_at(void* dst, const void* host, std::size_t n);
    void download_at(void* host, const void* src, std::size_t n);
    void copy_at(void* dst, const void* src, std::size_t n);
    void add_at(core::dtype type, void* acc, const void* in, std::size_t n);
    /// Makes completed GPUDirect RDMA writes into this GPU visible to its next copies and
    /// kernels: cudaDeviceFlushGPUDirectRDMAWrites(current device, to owner) where the GPU
    /// does not order them natively (cudaDevAttrGPUDirectRDMAWritesOrdering below owner);
    /// nothing where it does. Throws std::system_error where a flush is needed and the GPU
    /// cannot do it (cudaDevAttrGPUDirectRDMAFlushWritesOptions without the host option).
    void flush_rdma_writes();

    /// Region r's buffer (an empty one when it has no bytes).
    const device_buffer& buffer(region r) const noexcept { return r == region::send ? send_ : r == region::recv ? recv_ : scratch_; }
    int device() const noexcept { return device_; }

private:
    struct impl;
    std::byte* at(region r, std::size_t offset, std::size_t n) const;
    int device_;
    int flush_needed_ = -1;  // flush_rdma_writes: -1 not asked yet, else whether the GPU needs it
    device_buffer send_, recv_, scratch_;
    std::unique_ptr<impl> impl_;
};

}  // namespace meshperf::gpu
