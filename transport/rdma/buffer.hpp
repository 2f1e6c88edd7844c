#pragma once
/// Page-aligned, zeroed host memory for registration.
#include <cstddef>

namespace meshperf::transport::rdma {

/// Owns bytes of page-aligned host memory, zeroed at allocation. Move-only.
class host_buffer {
public:
    host_buffer() = default;
    /// Allocates bytes (> 0). Throws rdma_error(ENOMEM).
    explicit host_buffer(std::size_t bytes);
    ~host_buffer();
    host_buffer(host_buffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
    host_buffer& operator=(host_buffer&&) = delete;
    host_buffer(const host_buffer&) = delete;

    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace meshperf::transport::rdma
