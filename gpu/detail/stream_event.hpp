#pragma once
/// Private to gpu/: RAII owners of a CUDA stream and event (includes the runtime header).
#include "gpu/detail/cuda_check.hpp"

#include <cuda_runtime.h>
#include <utility>

namespace meshperf::gpu::detail {

/// A non-blocking stream on the device current at construction.
class stream {
public:
    stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
    stream(stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    stream& operator=(stream&& o) noexcept {
        std::swap(s_, o.s_);
        return *this;
    }
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;
    ~stream() {
        if (s_) (void)cudaStreamDestroy(s_);
    }
    cudaStream_t get() const noexcept { return s_; }
    void synchronize() const { check(cudaStreamSynchronize(s_), "cudaStreamSynchronize"); }

private:
    cudaStream_t s_ = nullptr;
};

/// An event on the device current at construction; timing events unless told otherwise.
class event {
public:
    explicit event(bool timing = true) {
        check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
    }
    event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
    event& operator=(event&& o) noexcept {
        std::swap(e_, o.e_);
        return *this;
    }
    event(const event&) = delete;
    event& operator=(const event&) = delete;
    ~event() {
        if (e_) (void)cudaEventDestroy(e_);
    }
    cudaEvent_t get() const noexcept { return e_; }
    void record(cudaStream_t s) const { check(cudaEventRecord(e_, s), "cudaEventRecord"); }
    void synchronize() const { check(cudaEventSynchronize(e_), "cudaEventSynchronize"); }

private:
    cudaEvent_t e_ = nullptr;
};

/// Seconds between two recorded, completed timing events.
inline double elapsed_seconds(const event& start, const event& stop) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    return static_cast<double>(ms) / 1e3;
}

}  // namespace meshperf::gpu::detail
