#include "transport/rdma/buffer.hpp"

#include "transport/rdma/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

namespace meshperf::transport::rdma {

host_buffer::host_buffer(std::size_t bytes) {
    const long page = sysconf(_SC_PAGESIZE);
    const std::size_t align = page > 0 ? static_cast<std::size_t>(page) : 4096;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    void* p = nullptr;
    if (int rc = posix_memalign(&p, align, rounded))
        throw_errno(rc, fmt::format("allocating {} bytes of RDMA buffer", rounded));
    std::memset(p, 0, rounded);  // also faults the pages in before registration
    data_ = static_cast<std::byte*>(p);
    size_ = bytes;
}

host_buffer::~host_buffer() { std::free(data_); }

}  // namespace meshperf::transport::rdma
