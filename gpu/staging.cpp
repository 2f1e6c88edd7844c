#include "gpu/staging.hpp"

#include "core/sizes.hpp"
#include "gpu/detail/cuda_check.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <utility>

namespace meshperf::gpu {
namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

cuda_staging_engine::cuda_staging_engine(int device, std::size_t chunk_bytes, unsigned chunks)
    : device_(device), chunk_bytes_(chunk_bytes), chunks_(chunks) {
    if (chunk_bytes == 0 || chunks == 0)
        throw std::invalid_argument("staging needs a positive chunk size and at least one chunk");
    detail::set_device(device);
    host_ = pinned_buffer(chunk_bytes * chunks);
    try {
        cudaStream_t s = nullptr;
        detail::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                      fmt::format("cudaStreamCreateWithFlags(cuda:{})", device));
        stream_ = s;
        events_.reserve(chunks);
        for (unsigned i = 0; i < chunks; ++i) {
            cudaEvent_t e = nullptr;
            detail::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
            events_.push_back(e);
        }
    } catch (...) {
        destroy();
        throw;
    }
}

cuda_staging_engine::cuda_staging_engine(cuda_staging_engine&& o) noexcept
    : device_(o.device_), chunk_bytes_(o.chunk_bytes_), chunks_(o.chunks_), host_(std::move(o.host_)),
      stream_(std::exchange(o.stream_, nullptr)), events_(std::move(o.events_)) {
    o.events_.clear();
}

cuda_staging_engine& cuda_staging_engine::operator=(cuda_staging_engine&& o) noexcept {
    if (this != &o) {
        destroy();
        device_ = o.device_;
        chunk_bytes_ = o.chunk_bytes_;
        chunks_ = o.chunks_;
        host_ = std::move(o.host_);
        stream_ = std::exchange(o.stream_, nullptr);
        events_ = std::move(o.events_);
        o.events_.clear();
    }
    return *this;
}

cuda_staging_engine::~cuda_staging_engine() { destroy(); }

void cuda_staging_engine::destroy() noexcept {
    // Copies may still be in flight into host_ (an aborted run): finish them before the
    // memory goes.
    if (stream_) {
        (void)cudaStreamSynchronize(as_stream(stream_));
        (void)cudaStreamDestroy(as_stream(stream_));
        stream_ = nullptr;
    }
    for (void* e : events_) (void)cudaEventDestroy(as_event(e));
    events_.clear();
    (void)cudaGetLastError();
}

void cuda_staging_engine::begin() { detail::check(cudaSetDevice(device_), "cudaSetDevice (staging)"); }

void cuda_staging_engine::copy_to_host(unsigned slot_index, const void* src, std::size_t n) {
    detail::check(cudaMemcpyAsync(slot(slot_index), src, n, cudaMemcpyDeviceToHost, as_stream(stream_)),
                  "cudaMemcpyAsync (staging device->host)");
    detail::check(cudaEventRecord(as_event(events_[slot_index]), as_stream(stream_)), "cudaEventRecord (staging)");
}

void cuda_staging_engine::copy_to_device(void* dst, unsigned slot_index, std::size_t n) {
    detail::check(cudaMemcpyAsync(dst, slot(slot_index), n, cudaMemcpyHostToDevice, as_stream(stream_)),
                  "cudaMemcpyAsync (staging host->device)");
    detail::check(cudaEventRecord(as_event(events_[slot_index]), as_stream(stream_)), "cudaEventRecord (staging)");
}

void cuda_staging_engine::wait(unsigned slot_index) {
    detail::check(cudaEventSynchronize(as_event(events_[slot_index])), "cudaEventSynchronize (staging)");
}

void cuda_staging_engine::wait_all() {
    detail::check(cudaStreamSynchronize(as_stream(stream_)), "cudaStreamSynchronize (staging)");
}

}  // namespace meshperf::gpu
