#include "gpu/dmabuf.hpp"

#include "core/sizes.hpp"
#include "gpu/detail/cuda_check.hpp"
#include "gpu/detail/driver_api.hpp"
#include "gpu/dmabuf_range.hpp"
#include "gpu/error.hpp"
#include "gpu/status.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <unistd.h>

namespace meshperf::gpu {

dmabuf_fd& dmabuf_fd::operator=(dmabuf_fd&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.release();
    }
    return *this;
}

dmabuf_fd::~dmabuf_fd() {
    if (fd_ >= 0) ::close(fd_);
}

bool dmabuf_supported(int device) noexcept {
    if (!cuda_availability().ok()) return false;
    return detail::device_attribute(device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) == 1;
}

dmabuf_export export_dmabuf(const device_buffer& buffer, dmabuf_mapping mapping) {
    if (!buffer) throw std::invalid_argument("export_dmabuf: empty device buffer");
    // The driver call acts on the current context: make the buffer's device current.
    detail::set_device(buffer.device());
    const auto& api = detail::driver();
    // cuMemGetHandleForAddressRange takes a page-aligned start and length; cudaMalloc aligns
    // to 256 bytes only, so export the whole pages around the buffer and register it at its
    // offset into them.
    const auto start = reinterpret_cast<std::uintptr_t>(buffer.data());
    const auto range = page_aligned_range(start, buffer.allocated_size(), host_page_size());
    std::string what = fmt::format("cuMemGetHandleForAddressRange(dma-buf, {} on cuda:{})",
                                   core::format_size(range.length), buffer.device());
    if (range.offset != 0)
        what += fmt::format(" (the buffer starts {} B into a page: exported {:#x}..{:#x}, whole pages around it)",
                            range.offset, range.base, range.base + range.length);
    if (!api.mem_get_handle_for_address_range)
        throw std::system_error(std::make_error_code(std::errc::function_not_supported),
                                what + ": the NVIDIA driver lacks it (needs CUDA 11.7 or newer)");
    int fd = -1;
    const unsigned long long flags =
        mapping == dmabuf_mapping::pcie ? static_cast<unsigned long long>(CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) : 0ull;
    const CUresult r = api.mem_get_handle_for_address_range(&fd, static_cast<CUdeviceptr>(range.base), range.length,
                                                            CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
    if (r != CUDA_SUCCESS) throw_cu_error(static_cast<int>(r), what);
    dmabuf_export out;
    out.fd = dmabuf_fd(fd);
    out.offset = range.offset;
    out.length = buffer.allocated_size();
    out.iova = start;
    out.dmabuf_length = range.length;
    return out;
}

}  // namespace meshperf::gpu
