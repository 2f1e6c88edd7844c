#include "gpu/buffer.hpp"

#include "core/sizes.hpp"
#include "gpu/detail/cuda_check.hpp"
#include "gpu/detail/driver_api.hpp"
#include "gpu/error.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace meshperf::gpu {
namespace {

// Blocks until the work on the current device's legacy default stream (where cudaMemcpy and
// cudaMemset run) is done; the error of that work, if any, is thrown naming `what`.
template <class Describe>
void wait_for_legacy_stream(Describe what) {
    detail::check(cudaStreamSynchronize(cudaStreamLegacy), [&] { return what() + ": waiting for it to finish"; });
}

}  // namespace

std::size_t host_page_size() noexcept {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : 4096;
}

device_buffer::device_buffer(int device, std::size_t bytes) : size_(bytes), device_(device) {
    if (bytes == 0) throw std::invalid_argument("device_buffer: size must be positive");
    const std::size_t page = host_page_size();
    allocated_ = (bytes + page - 1) / page * page;
    detail::set_device(device);
    detail::check(cudaMalloc(&ptr_, allocated_),
                  fmt::format("cudaMalloc({}) on cuda:{}", core::format_size(allocated_), device));
}

device_buffer::device_buffer(device_buffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)),
      allocated_(std::exchange(o.allocated_, 0)), device_(std::exchange(o.device_, -1)) {}

device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
    if (this != &o) {
        reset();
        ptr_ = std::exchange(o.ptr_, nullptr);
        size_ = std::exchange(o.size_, 0);
        allocated_ = std::exchange(o.allocated_, 0);
        device_ = std::exchange(o.device_, -1);
    }
    return *this;
}

device_buffer::~device_buffer() { reset(); }

void device_buffer::reset() noexcept {
    // With unified addressing cudaFree finds the owning device itself; a destructor must not
    // change the calling thread's current device.
    if (ptr_ && cudaFree(ptr_) != cudaSuccess) (void)cudaGetLastError();
    ptr_ = nullptr;
    size_ = allocated_ = 0;
}

void copy_to_device(const device_buffer& dst, const void* src, std::size_t n, std::size_t offset) {
    if (offset > dst.size() || n > dst.size() - offset)
        throw std::invalid_argument("copy_to_device: more bytes than the buffer holds");
    detail::set_device(dst.device());
    detail::check(cudaMemcpy(static_cast<std::byte*>(dst.data()) + offset, src, n, cudaMemcpyHostToDevice),
                  fmt::format("cudaMemcpy({} host -> cuda:{})", core::format_size(n), dst.device()));
    // The CUDA runtime's "API synchronization behavior": a copy from pageable host memory
    // returns once the source is staged for DMA, which may be before the bytes reach device
    // memory; it runs on the legacy stream, which does not order against the non-blocking
    // staging and copy streams. Waiting for the legacy stream makes the copy complete here.
    wait_for_legacy_stream([&] { return fmt::format("cudaMemcpy({} host -> cuda:{})", core::format_size(n), dst.device()); });
}

void copy_to_host(void* dst, const device_buffer& src, std::size_t n) {
    if (n > src.size()) throw std::invalid_argument("copy_to_host: more bytes than the buffer holds");
    detail::set_device(src.device());
    // Device to pageable host memory returns only once the copy is done (the runtime's "API
    // synchronization behavior"); to pinned memory cudaMemcpy is synchronous as well.
    detail::check(cudaMemcpy(dst, src.data(), n, cudaMemcpyDeviceToHost),
                  fmt::format("cudaMemcpy({} cuda:{} -> host)", core::format_size(n), src.device()));
}

void zero_device(const device_buffer& dst, std::size_t offset, std::size_t n) {
    if (offset > dst.allocated_size() || n > dst.allocated_size() - offset)
        throw std::invalid_argument("zero_device: range beyond the buffer");
    detail::set_device(dst.device());
    detail::check(cudaMemset(static_cast<std::byte*>(dst.data()) + offset, 0, n),
                  fmt::format("cudaMemset({} on cuda:{})", core::format_size(n), dst.device()));
    // cudaMemset of device memory is asynchronous with respect to the host (the runtime's
    // "API synchronization behavior"), on the legacy stream: wait for it.
    wait_for_legacy_stream([&] { return fmt::format("cudaMemset({} on cuda:{})", core::format_size(n), dst.device()); });
}

void enable_sync_memops(const device_buffer& buf) {
    if (!buf) throw std::invalid_argument("enable_sync_memops: empty device buffer");
    const std::string what = fmt::format("cuPointerSetAttribute(SYNC_MEMOPS, {} on cuda:{})",
                                         core::format_size(buf.allocated_size()), buf.device());
    detail::set_device(buf.device());
    const auto& api = detail::driver();
    if (!api.pointer_set_attribute)
        throw std::system_error(std::make_error_code(std::errc::function_not_supported),
                                what + ": the NVIDIA driver does not offer it");
    const unsigned int on = 1;
    const CUresult r = api.pointer_set_attribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                                 reinterpret_cast<CUdeviceptr>(buf.data()));
    if (r != CUDA_SUCCESS) throw_cu_error(static_cast<int>(r), what);
}

pinned_buffer::pinned_buffer(std::size_t bytes) : size_(bytes) {
    if (bytes == 0) throw std::invalid_argument("pinned_buffer: size must be positive");
    detail::check(cudaHostAlloc(&ptr_, bytes, cudaHostAllocPortable),
                  fmt::format("cudaHostAlloc({} pinned host memory)", core::format_size(bytes)));
}

pinned_buffer::pinned_buffer(pinned_buffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}

pinned_buffer& pinned_buffer::operator=(pinned_buffer&& o) noexcept {
    if (this != &o) {
        reset();
        ptr_ = std::exchange(o.ptr_, nullptr);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}

pinned_buffer::~pinned_buffer() { reset(); }

void pinned_buffer::reset() noexcept {
    if (ptr_ && cudaFreeHost(ptr_) != cudaSuccess) (void)cudaGetLastError();
    ptr_ = nullptr;
    size_ = 0;
}

}  // namespace meshperf::gpu
