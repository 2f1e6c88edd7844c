#include "gpu/collective_device.hpp"

#include "core/sizes.hpp"
#include "gpu/detail/cuda_check.hpp"
#include "gpu/detail/kernels.hpp"
#include "gpu/detail/stream_event.hpp"

#include <fmt/format.h>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace meshperf::gpu {

struct collective_device::impl {
    detail::stream stream;
};

namespace {
device_buffer allocate(int device, std::size_t bytes) { return bytes ? device_buffer(device, bytes) : device_buffer(); }

int kernel_type(core::dtype t) {
    switch (t) {
    case core::dtype::fp32: return detail::sum_fp32;
    case core::dtype::bf16: return detail::sum_bf16;
    case core::dtype::fp16: return detail::sum_fp16;
    }
    return -1;
}
}  // namespace

collective_device::collective_device(int device, std::size_t send_bytes, std::size_t recv_bytes, std::size_t scratch_bytes)
    : device_(device), send_(allocate(device, send_bytes)), recv_(allocate(device, recv_bytes)),
      scratch_(allocate(device, scratch_bytes)) {
    detail::set_device(device_);
    impl_ = std::make_unique<impl>();
}

collective_device::~collective_device() = default;

std::byte* collective_device::at(region r, std::size_t offset, std::size_t n) const {
    const device_buffer& b = r == region::send ? send_ : r == region::recv ? recv_ : scratch_;
    if (offset > b.size() || n > b.size() - offset)
        throw std::invalid_argument(fmt::format("collective device buffer: {} bytes at {} past its {} bytes", n, offset, b.size()));
    return static_cast<std::byte*>(b.data()) + offset;
}

void collective_device::upload(region r, std::size_t offset, const void* host, std::size_t n) {
    if (n) upload_at(at(r, offset, n), host, n);
}

void collective_device::download(void* host, region r, std::size_t offset, std::size_t n) {
    if (n) download_at(host, at(r, offset, n), n);
}

void collective_device::copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n) {
    if (n) copy_at(at(dst, dst_offset, n), at(src, src_offset, n), n);
}

void collective_device::add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset,
                            std::size_t n) {
    if (n) add_at(type, at(acc, acc_offset, n), at(in, in_offset, n), n);
}

void collective_device::upload_at(void* dst, const void* host, std::size_t n) {
    if (!n) return;
    detail::set_device(device_);
    detail::check(cudaMemcpyAsync(dst, host, n, cudaMemcpyHostToDevice, impl_->stream.get()),
                  [&] { return fmt::format("cudaMemcpyAsync({} host -> cuda:{})", core::format_size(n), device_); });
    impl_->stream.synchronize();
}

void collective_device::download_at(void* host, const void* src, std::size_t n) {
    if (!n) return;
    detail::set_device(device_);
    detail::check(cudaMemcpyAsync(host, src, n, cudaMemcpyDeviceToHost, impl_->stream.get()),
                  [&] { return fmt::format("cudaMemcpyAsync({} cuda:{} -> host)", core::format_size(n), device_); });
    impl_->stream.synchronize();
}

void collective_device::copy_at(void* dst, const void* src, std::size_t n) {
    if (!n) return;
    detail::set_device(device_);
    detail::check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, impl_->stream.get()),
                  [&] { return fmt::format("cudaMemcpyAsync({} within cuda:{})", core::format_size(n), device_); });
    impl_->stream.synchronize();
}

void collective_device::add_at(core::dtype type, void* acc, const void* in, std::size_t n) {
    if (!n) return;
    const std::size_t w = core::dtype_bytes(type);
    if (n % w) throw std::invalid_argument(fmt::format("collective sum over {} bytes: not whole {} elements", n, core::to_string(type)));
    detail::set_device(device_);
    detail::check(static_cast<cudaError_t>(detail::launch_sum(kernel_type(type), acc, in, n / w, impl_->stream.get())),
                  [&] { return fmt::format("the {} sum kernel over {} on cuda:{}", core::to_string(type), core::format_size(n), device_); });
    impl_->stream.synchronize();
}

void collective_device::flush_rdma_writes() {
    if (flush_needed_ < 0) {
        int ordering = 0, options = 0;
        detail::check(cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, device_),
                      fmt::format("cudaDeviceGetAttribute(GPUDirectRDMAWritesOrdering, cuda:{})", device_));
        detail::check(cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device_),
                      fmt::format("cudaDeviceGetAttribute(GPUDirectRDMAFlushWritesOptions, cuda:{})", device_));
        const bool needed = ordering < cudaGPUDirectRDMAWritesOrderingOwner;
        if (needed && !(options & cudaFlushGPUDirectRDMAWritesOptionHost))
            throw std::system_error(ENOTSUP, std::generic_category(),
                                    fmt::format("cuda:{} does not order GPUDirect RDMA writes (ordering {}) and cannot flush them "
                                                "(flush options {:#x}): its received data cannot be trusted; run the "
                                                "collective with --transport tcp (staged through host memory) or --memory host",
                                                device_, ordering, options));
        flush_needed_ = needed;
    }
    if (!flush_needed_) return;  // per piece: nothing more where the GPU orders the NIC's writes
    detail::set_device(device_);
    detail::check(cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                     cudaFlushGPUDirectRDMAWritesToOwner),
                  [&] { return fmt::format("cudaDeviceFlushGPUDirectRDMAWrites(cuda:{})", device_); });
}

}  // namespace meshperf::gpu
