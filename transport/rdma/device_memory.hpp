#pragma once
/// Device (GPU) memory for the QPs' buffers, for GPUDirect RDMA. The RDMA code only
/// registers it with the NIC and, at point set-up, clears it; the GPU code behind these
/// interfaces allocates it and exports it as a dma-buf (the daemon wires gpu/ in, so
/// transport/ never depends on CUDA). Plain C++: no verbs or CUDA header, so the daemon
/// includes it whether or not RDMA is built.
#include "core/collective/dtype.hpp"
#include "core/gpu_registration.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace meshperf::transport::rdma {

/// What ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access) needs. The fd stays owned
/// by the allocation that exported it.
struct dmabuf_region {
    int fd = -1;
    std::uint64_t offset = 0;  ///< of the buffer's start within the dma-buf
    std::size_t length = 0;
    std::uint64_t iova = 0;    ///< the address work requests use for the buffer (its device pointer)
};

/// One device allocation (a QP's tx and rx halves). Not for the CPU to read or write.
class device_allocation {
public:
    virtual ~device_allocation() = default;
    /// Device address of the first byte.
    virtual std::byte* data() const noexcept = 0;
    /// Bytes usable (at least what was asked for).
    virtual std::size_t size() const noexcept = 0;
    /// The allocation exported as a dma-buf (exported on the first call, then cached).
    /// Throws std::system_error when the driver cannot export it.
    virtual dmabuf_region dmabuf() = 0;
    /// Sets bytes [offset, offset + n) to zero. Throws std::system_error.
    virtual void zero(std::size_t offset, std::size_t n) = 0;
};

/// A kind of device memory on this node ("cuda:0"): allocates it and says how it can be
/// registered.
class device_memory {
public:
    virtual ~device_memory() = default;
    /// "cuda:0", for messages and the result.
    virtual std::string name() const = 0;
    /// The node's capabilities for registering this memory; verbs_dmabuf is filled in by
    /// the RDMA code (it knows its rdma-core).
    virtual core::gpu_registration_caps caps() const = 0;
    /// Allocates bytes. Throws std::system_error (no driver, out of memory, ...).
    virtual std::unique_ptr<device_allocation> allocate(std::size_t bytes) const = 0;
};

/// Copies and sums between device addresses, done by the device: what a collective's RDMA
/// step loop (mesh_steps.hpp) asks of GPUDirect memory to take a piece the NIC wrote into a
/// receive slot (transport/mesh/device_memory.hpp implements it for a size's buffers). Every
/// call waits for its work and throws std::exception with what failed. Used by one thread.
class device_transfers {
public:
    virtual ~device_transfers() = default;
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

}  // namespace meshperf::transport::rdma
