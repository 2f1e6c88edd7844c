#pragma once
/// RAII owners of CUDA memory: device memory (cudaMalloc) and pinned host memory
/// (cudaHostAlloc). Move-only. Plain C++ (no CUDA headers).
#include <cstddef>

namespace meshperf::gpu {

/// Device memory on one GPU.
class device_buffer {
public:
    device_buffer() = default;
    /// Allocates bytes (> 0) on cuda:device. The allocation is rounded up to the host page
    /// size, so the whole buffer can be exported as a dma-buf. Throws std::system_error
    /// naming the size and the device ("no NVIDIA driver: ...", "out of memory", ...).
    /// Makes device current on the calling thread.
    device_buffer(int device, std::size_t bytes);
    device_buffer(device_buffer&& o) noexcept;
    device_buffer& operator=(device_buffer&& o) noexcept;
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer();

    /// Device pointer (not dereferenceable on the host); null when empty.
    void* data() const noexcept { return ptr_; }
    /// Bytes asked for.
    std::size_t size() const noexcept { return size_; }
    /// Bytes allocated: size() rounded up to the host page size.
    std::size_t allocated_size() const noexcept { return allocated_; }
    int device() const noexcept { return device_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }

private:
    void reset() noexcept;
    void* ptr_ = nullptr;
    std::size_t size_ = 0;
    std::size_t allocated_ = 0;
    int device_ = -1;
};

/// Copies n bytes from host memory into dst at byte `offset` (offset + n <= dst.size()) and
/// waits until they are in device memory (the legacy stream is synchronized after the copy:
/// a copy from pageable memory may return once the bytes are staged, before the DMA to the
/// device ends). Throws std::system_error naming the copy.
void copy_to_device(const device_buffer& dst, const void* src, std::size_t n, std::size_t offset = 0);

/// Copies n bytes (<= src.size()) of src into host memory and waits for them.
/// Throws std::system_error naming the copy.
void copy_to_host(void* dst, const device_buffer& src, std::size_t n);

/// Sets bytes [offset, offset + n) of dst to zero and waits until device memory is written
/// (cudaMemset is asynchronous to the host for device memory: the legacy stream is
/// synchronized after it). Throws std::system_error.
void zero_device(const device_buffer& dst, std::size_t offset, std::size_t n);

/// Sets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on buf's allocation (cuPointerSetAttribute, through
/// the driver entry point): synchronous memory operations on it (cudaMemcpy, cudaMemset)
/// then finish before they return, which a NIC reading or writing it through GPUDirect RDMA
/// needs. Call it on every buffer registered with an RDMA device. Throws std::system_error
/// (cu_category()) when the driver refuses, ENOSYS when it lacks the entry point.
void enable_sync_memops(const device_buffer& buf);

/// Page-locked host memory, usable by copies to and from any device (cudaHostAllocPortable).
class pinned_buffer {
public:
    pinned_buffer() = default;
    /// Allocates bytes (> 0) of pinned host memory. Throws std::system_error.
    explicit pinned_buffer(std::size_t bytes);
    pinned_buffer(pinned_buffer&& o) noexcept;
    pinned_buffer& operator=(pinned_buffer&& o) noexcept;
    pinned_buffer(const pinned_buffer&) = delete;
    pinned_buffer& operator=(const pinned_buffer&) = delete;
    ~pinned_buffer();

    /// Host pointer; null when empty.
    void* data() const noexcept { return ptr_; }
    std::size_t size() const noexcept { return size_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }

private:
    void reset() noexcept;
    void* ptr_ = nullptr;
    std::size_t size_ = 0;
};

/// The host page size (sysconf), the alignment dma-buf export needs.
std::size_t host_page_size() noexcept;

}  // namespace meshperf::gpu
