#pragma once
/// The page-aligned range a dma-buf export covers. cuMemGetHandleForAddressRange needs a
/// start and a length that are multiples of the host page size, while cudaMalloc promises
/// only 256-byte alignment: a buffer whose start is not page-aligned is exported as the
/// aligned range that contains it, and ibv_reg_dmabuf_mr is given the buffer's offset into
/// that range. Pure C++ (no CUDA), unit-tested.
#include <cstdint>

namespace meshperf::gpu {

/// The range to export for one buffer.
struct dmabuf_range {
    std::uint64_t base = 0;    ///< start of the exported range: the buffer's start rounded down to a page
    std::uint64_t offset = 0;  ///< the buffer's start minus base: ibv_reg_dmabuf_mr's offset
    std::uint64_t length = 0;  ///< bytes exported: offset + the buffer's bytes, rounded up to a page
};

/// The page-aligned range containing [start, start + bytes). page must be a power of two and
/// bytes positive; throws std::invalid_argument otherwise, or when the range would pass the
/// end of the address space.
dmabuf_range page_aligned_range(std::uint64_t start, std::uint64_t bytes, std::uint64_t page);

}  // namespace meshperf::gpu
