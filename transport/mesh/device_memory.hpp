#pragma once
/// Where one size of a collective keeps its buffers when they are not host memory
/// (`--memory cuda:N`): on a device. The engine (collective_engine.cpp) keeps host mirrors of
/// them for loading the inputs and checking the results, and moves the data one of two ways:
///  - over TCP, staged: before a step sends, the bytes it sends are copied down to the
///    mirror; after its receives, what came is copied up, and reducing receives are summed
///    on the device;
///  - over RDMA, GPUDirect: the NIC reads the sends from the device buffers and writes the
///    pieces into receive slots in device memory (both registered by dma-buf or
///    nvidia-peermem); each piece is copied, or summed, from its slot into the buffer on the
///    device (the address operations below), after flushing the NIC's writes where the GPU
///    does not order them.
/// Implemented for CUDA in daemon/runtime/gpu_support.cpp, emulated in host memory for tests
/// (daemon/test_hooks/emulated_gpu.hpp).
#include "core/collective/dtype.hpp"
#include "transport/rdma/device_memory.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace meshperf::daemon {

/// A size's send, receive and scratch buffers in device memory. Every call waits for its
/// work and throws std::exception with what failed. Used by one thread.
class collective_device_memory {
public:
    enum class region { send, recv, scratch };
    virtual ~collective_device_memory() = default;
    /// n bytes of host memory into `r` at `offset`.
    virtual void upload(region r, std::size_t offset, const std::byte* host, std::size_t n) = 0;
    /// n bytes of `r` at `offset` into host memory.
    virtual void download(std::byte* host, region r, std::size_t offset, std::size_t n) = 0;
    /// n bytes within the device.
    virtual void copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n) = 0;
    /// acc[i] += in[i] over n bytes of whole `type` elements, rounding as core::reduce_sum.
    virtual void add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset, std::size_t n) = 0;

    // --- GPUDirect RDMA: device addresses, which may lie outside the three regions (an RDMA
    // --- endpoint's receive slots, allocated from rdma_memory() of the same domain).

    /// Region `r` as memory the NIC can register (its device address and dma-buf); null when
    /// the region has no bytes.
    virtual transport::rdma::device_allocation* allocation(region r) = 0;
    /// n bytes from device address `src` to device address `dst`.
    virtual void copy_at(std::byte* dst, const std::byte* src, std::size_t n) = 0;
    /// acc[i] += in[i] at device addresses, over n bytes of whole `type` elements.
    virtual void add_at(core::dtype type, std::byte* acc, const std::byte* in, std::size_t n) = 0;
    /// n bytes from device address `src` into host memory.
    virtual void download_at(std::byte* host, const std::byte* src, std::size_t n) = 0;
    /// n bytes of host memory to device address `dst`.
    virtual void upload_at(std::byte* dst, const std::byte* host, std::size_t n) = 0;
    /// Makes the NIC's completed writes into device memory visible to the device's next
    /// copies and sums (cudaDeviceFlushGPUDirectRDMAWrites on a GPU that does not order them
    /// natively; nothing where it does).
    virtual void flush_rdma_writes() = 0;
};

/// Makes a size's device memory of (send, receive, scratch) bytes; empty: host memory.
using collective_memory_factory =
    std::function<std::unique_ptr<collective_device_memory>(std::size_t send, std::size_t recv, std::size_t scratch)>;

/// The factory for a run's memory domain: empty for "host"; for "cuda:N" buffers on that
/// GPU (the sum a CUDA kernel). Throws like require_memory_domain where the GPU cannot be used.
collective_memory_factory collective_memory_for(const std::string& domain);

}  // namespace meshperf::daemon
