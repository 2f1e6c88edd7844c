#pragma once
/// GPU memory over TCP: pinned host staging chunks with overlapped cudaMemcpyAsync, for the
/// TCP data loop. Plain C++ (no CUDA headers).
///
/// Sender, per message:
///     st.start_send(dev_ptr, n);
///     for (auto c = st.next_send_chunk(); !c.empty(); c = st.next_send_chunk())
///         send_all(fd, c.data(), c.size(), deadline);
/// Receiver, per message:
///     st.start_receive(dev_ptr, n);
///     for (auto c = st.next_receive_chunk(); !c.empty(); c = st.next_receive_chunk()) {
///         recv_exactly(fd, c.data(), c.size());
///         st.commit_receive_chunk();
///     }
///     st.finish_receive();
/// While the caller sends chunk i, the copies of chunks i+1 .. i+chunks()-1 run on the
/// stream; while it receives chunk i, the copies of earlier chunks to the device run.
/// Nothing is allocated per message or chunk.
#include "gpu/buffer.hpp"
#include "gpu/stager.hpp"

#include <cstddef>
#include <vector>

namespace meshperf::gpu {

/// The CUDA engine of basic_stager: chunks() pinned host chunks, one non-blocking stream
/// and one event per chunk on cuda:device. Move-only.
class cuda_staging_engine {
public:
    /// Allocates chunks * chunk_bytes of pinned host memory. Throws std::system_error (no
    /// driver, no device, out of memory) or std::invalid_argument for zero sizes.
    cuda_staging_engine(int device, std::size_t chunk_bytes, unsigned chunks);
    cuda_staging_engine(cuda_staging_engine&&) noexcept;
    cuda_staging_engine& operator=(cuda_staging_engine&&) noexcept;
    cuda_staging_engine(const cuda_staging_engine&) = delete;
    cuda_staging_engine& operator=(const cuda_staging_engine&) = delete;
    ~cuda_staging_engine();

    int device() const noexcept { return device_; }
    std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }
    unsigned chunks() const noexcept { return chunks_; }
    std::byte* slot(unsigned i) noexcept { return static_cast<std::byte*>(host_.data()) + i * chunk_bytes_; }

    /// Makes the device current on the calling (data) thread.
    void begin();
    void copy_to_host(unsigned slot, const void* src, std::size_t n);
    void copy_to_device(void* dst, unsigned slot, std::size_t n);
    void wait(unsigned slot);
    void wait_all();

private:
    void destroy() noexcept;
    int device_ = -1;
    std::size_t chunk_bytes_ = 0;
    unsigned chunks_ = 0;
    pinned_buffer host_;
    void* stream_ = nullptr;     // cudaStream_t
    std::vector<void*> events_;  // cudaEvent_t per slot
};

/// Default staging geometry: 4 chunks of 1 MiB (enough to keep a 100 Gbit/s socket busy
/// while a PCIe copy runs; tune per run).
inline constexpr std::size_t default_staging_chunk_bytes = 1u << 20;
inline constexpr unsigned default_staging_chunks = 4;

/// Staging for one TCP stream on cuda:device: staging st(device, chunk_bytes, chunks).
/// One data thread uses it; it is not thread-safe.
using staging = basic_stager<cuda_staging_engine>;

}  // namespace meshperf::gpu
