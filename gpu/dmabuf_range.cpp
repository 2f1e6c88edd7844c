#include "gpu/dmabuf_range.hpp"

#include <limits>
#include <stdexcept>

namespace meshperf::gpu {

dmabuf_range page_aligned_range(std::uint64_t start, std::uint64_t bytes, std::uint64_t page) {
    if (page == 0 || (page & (page - 1)) != 0)
        throw std::invalid_argument("page_aligned_range: the page size must be a power of two");
    if (bytes == 0) throw std::invalid_argument("page_aligned_range: the buffer must hold at least one byte");
    dmabuf_range r;
    r.base = start & ~(page - 1);
    r.offset = start - r.base;
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    // base + offset + bytes, rounded up to a page, must still be an address.
    if (bytes > max - start || r.offset + bytes > max - (page - 1) - r.base)
        throw std::invalid_argument("page_aligned_range: the range passes the end of the address space");
    r.length = (r.offset + bytes + page - 1) & ~(page - 1);
    return r;
}

}  // namespace meshperf::gpu
