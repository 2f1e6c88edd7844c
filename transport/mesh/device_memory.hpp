#pragma once
/// Where one size of a collective keeps its buffers when they are not host memory
/// (`--memory cuda:N`): on a device. The engine (daemon/collective/engine.cpp) keeps host
/// mirrors of them for loading the inputs and checking the results, and moves the data one of
/// two ways:
///  - over TCP, staged: before a step sends, the bytes it sends are copied down to the
///    mirror; after its receives, what came is copied up, and reducing receives are summed
///    on the device;
///  - over RDMA, GPUDirect: the NIC reads the sends from the device buffers and writes the
///    pieces into receive slots in device memory (both registered by dma-buf or
///    nvidia-peermem); each piece is copied, or summed, from its slot into the buffer on the
///    device (the address operations of rdma::device_transfers), after flushing the NIC's
///    writes where the GPU does not order them.
/// Implemented for CUDA in daemon/runtime/gpu_support.cpp, emulated in host memory for tests
/// (daemon/test_hooks/emulated_gpu.hpp). Plain C++: no verbs or CUDA header.
#include "core/collective/dtype.hpp"
#include "transport/rdma/device_memory.hpp"

#include <cstddef>
#include <functional>
#include <memory>

namespace meshperf::transport::mesh {

/// A size's send, receive and scratch buffers in device memory. Every call waits for its
/// work and throws std::exception with what failed. Used by one thread.
class device_memory : public rdma::device_transfers {
public:
    enum class region { send, recv, scratch };
    /// n bytes of host memory into `r` at `offset`.
    virtual void upload(region r, std::size_t offset, const std::byte* host, std::size_t n) = 0;
    /// n bytes of `r` at `offset` into host memory.
    virtual void download(std::byte* host, region r, std::size_t offset, std::size_t n) = 0;
    /// n bytes within the device.
    virtual void copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n) = 0;
    /// acc[i] += in[i] over n bytes of whole `type` elements, rounding as core::reduce_sum.
    virtual void add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset, std::size_t n) = 0;

    /// GPUDirect RDMA: region `r` as memory the NIC can register (its device address and
    /// dma-buf); null when the region has no bytes. Device addresses may also lie outside the
    /// three regions (an RDMA endpoint's receive slots, allocated from rdma::device_memory of
    /// the same domain): the address operations of rdma::device_transfers take any.
    virtual rdma::device_allocation* allocation(region r) = 0;
};

/// Makes a size's device memory of (send, receive, scratch) bytes; empty: host memory.
using device_memory_factory =
    std::function<std::unique_ptr<device_memory>(std::size_t send, std::size_t recv, std::size_t scratch)>;

}  // namespace meshperf::transport::mesh
