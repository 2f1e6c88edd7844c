#pragma once
/// Where one size of a collective keeps its buffers when they are not host memory
/// (`--memory cuda:N`): on a device, with the engine's host buffers as staging mirrors
/// (collective_engine.cpp). Before a step sends, the bytes it sends are copied down to the
/// mirror; after its receives, what came is copied up, and reducing receives are summed on
/// the device. Both data paths (TCP, RDMA) move the mirrors, so GPU memory is staged on both
/// (GPUDirect registration is not used by collectives). Implemented for CUDA in
/// daemon/service/gpu_support.cpp; unit tests emulate a device in host memory.
#include "core/dtype.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace meshperf::daemon {

/// A size's send, receive and scratch buffers in device memory. Every call waits for its
/// work and throws std::exception with what failed.
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
};

/// Makes a size's device memory of (send, receive, scratch) bytes; empty: host memory.
using collective_memory_factory =
    std::function<std::unique_ptr<collective_device_memory>(std::size_t send, std::size_t recv, std::size_t scratch)>;

/// The factory for a run's memory domain: empty for "host"; for "cuda:N" buffers on that
/// GPU (the sum a CUDA kernel). Throws like require_memory_domain where the GPU cannot be used.
collective_memory_factory collective_memory_for(const std::string& domain);

}  // namespace meshperf::daemon
