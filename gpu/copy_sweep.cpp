#include "gpu/copy_sweep.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"
#include "gpu/buffer.hpp"
#include "gpu/detail/cuda_check.hpp"
#include "gpu/detail/kernels.hpp"
#include "gpu/detail/stream_event.hpp"
#include "gpu/numa_binding.hpp"
#include "gpu/pattern.hpp"
#include "gpu/status.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <optional>

namespace meshperf::gpu {
namespace {

// Where the bytes of one side live.
struct side {
    int device = -1;  // -1: pinned host memory
    std::optional<device_buffer> dev;
    std::optional<pinned_buffer> host;
    void* ptr() const { return dev ? dev->data() : host->data(); }
    std::string name() const { return device < 0 ? std::string("host") : fmt::format("cuda:{}", device); }
};

side make_side(int device, std::size_t bytes) {
    side s;
    s.device = device;
    if (device < 0) s.host.emplace(bytes);
    else s.dev.emplace(device, bytes);
    return s;
}

class sweeper {
public:
    sweeper(copy_kind kind, const copy_options& o, int src_dev, int dst_dev, std::size_t max_bytes)
        : kind_(kind), o_(o), src_(make_side(src_dev, max_bytes)), dst_(make_side(dst_dev, max_bytes)),
          exec_device_(src_dev >= 0 ? src_dev : dst_dev) {
        if (o.verify && dst_.device >= 0 && dst_.device != exec_device_) {
            // Checking kernels run on the destination's device, on a stream of that device.
            detail::set_device(dst_.device);
            dst_stream_.emplace();
        }
        detail::set_device(exec_device_);
        stream_.emplace();
        start_.emplace();
        stop_.emplace();
    }

    bool enable_peer_access() {
        int can = 0;
        detail::check(cudaDeviceCanAccessPeer(&can, src_.device, dst_.device), "cudaDeviceCanAccessPeer");
        if (!can) return false;
        // The copy runs on the source device's stream; it needs access to the destination.
        detail::set_device(src_.device);
        const cudaError_t e = cudaDeviceEnablePeerAccess(dst_.device, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
            return true;
        }
        detail::check(e, fmt::format("cudaDeviceEnablePeerAccess(cuda:{} -> cuda:{})", src_.device, dst_.device));
        return true;
    }

    std::string src_name() const { return src_.name(); }
    std::string dst_name() const { return dst_.name(); }

    copy_point measure(std::size_t n) {
        copy(n);  // first touch of this size, untimed
        const unsigned warm = std::max(1u, o_.warmup_copies);
        const double warm_s = timed(n, warm);
        const unsigned per_batch = copies_per_batch(warm_s / warm, o_.min_batch_seconds, o_.max_copies_per_batch);
        std::vector<double> rates;
        for (unsigned b = 0; b < std::max(1u, o_.batches); ++b) {
            if (b > 0 && o_.stop.stop_requested()) break;
            const double secs = timed(n, per_batch);
            rates.push_back(gb_per_s(static_cast<double>(n) * per_batch, secs));
        }
        if (o_.timed_done) o_.timed_done();
        while (o_.keep_loading && o_.keep_loading()) {  // load for the GPUs still timed, one copy at a time
            copy(n);
            stream_->synchronize();
        }
        copy_point p = summarize_batches(n, std::move(rates), per_batch);
        check_sane(p);
        if (o_.verify) {
            p.verify = true;
            p.mismatched_bytes = verify(n);
        }
        return p;
    }

private:
    cudaStream_t s() const { return stream_->get(); }
    cudaStream_t dst_stream() const { return dst_stream_ ? dst_stream_->get() : s(); }

    // Enqueues one copy of n bytes on the stream.
    void copy(std::size_t n) {
        cudaError_t e;
        switch (kind_) {
        case copy_kind::h2d: e = cudaMemcpyAsync(dst_.ptr(), src_.ptr(), n, cudaMemcpyHostToDevice, s()); break;
        case copy_kind::d2h: e = cudaMemcpyAsync(dst_.ptr(), src_.ptr(), n, cudaMemcpyDeviceToHost, s()); break;
        case copy_kind::d2d: e = cudaMemcpyAsync(dst_.ptr(), src_.ptr(), n, cudaMemcpyDeviceToDevice, s()); break;
        case copy_kind::p2p:
        default: e = cudaMemcpyPeerAsync(dst_.ptr(), dst_.device, src_.ptr(), src_.device, n, s()); break;
        }
        detail::check(e, "cudaMemcpyAsync");
    }

    // Seconds for `count` back-to-back copies of n bytes, between two events on the stream.
    double timed(std::size_t n, unsigned count) {
        start_->record(s());
        for (unsigned i = 0; i < count; ++i) copy(n);
        stop_->record(s());
        stop_->synchronize();
        return detail::elapsed_seconds(*start_, *stop_);
    }

    // A kernel that cannot run on this GPU (built for sm_90 + compute_90 PTX; older GPUs
    // have no image) makes verification fall back to copies through host memory.
    bool kernel_usable(int launched) {
        if (launched == 0) return true;
        (void)cudaGetLastError();
        if (launched == cudaErrorNoKernelImageForDevice || launched == cudaErrorUnsupportedPtxVersion ||
            launched == cudaErrorInvalidDeviceFunction) {
            kernels_ok_ = false;
            return false;
        }
        detail::check(static_cast<cudaError_t>(launched), "verify kernel launch");
        return false;
    }

    void* scratch(std::size_t n) {
        if (!scratch_ || scratch_->size() < n) scratch_.emplace(n);
        return scratch_->data();
    }

    // Pattern into device memory of the current device, on stream st; waits for it.
    void fill_device(void* dst, std::size_t n, std::uint64_t seed, cudaStream_t st) {
        if (!kernels_ok_ || !kernel_usable(detail::launch_fill_pattern(dst, n, seed, st))) {
            void* h = scratch(n);
            fill_pattern_host(h, n, seed);
            detail::check(cudaMemcpyAsync(dst, h, n, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (verify fill)");
        }
        detail::check(cudaStreamSynchronize(st), "cudaStreamSynchronize (verify fill)");
    }

    // Bytes of device memory of the current device that differ from the pattern.
    std::uint64_t count_device(const void* src, std::size_t n, std::uint64_t seed, cudaStream_t st) {
        if (kernels_ok_) {
            if (!counter_ || counter_->device() != dst_.device) counter_.emplace(dst_.device, sizeof(unsigned long long));
            auto* counter = static_cast<unsigned long long*>(counter_->data());
            detail::check(cudaMemsetAsync(counter, 0, sizeof *counter, st), "cudaMemsetAsync (verify counter)");
            if (kernel_usable(detail::launch_count_mismatches(src, n, seed, counter, st))) {
                unsigned long long bad = 0;
                detail::check(cudaMemcpyAsync(&bad, counter, sizeof bad, cudaMemcpyDeviceToHost, st),
                              "cudaMemcpyAsync (verify counter)");
                detail::check(cudaStreamSynchronize(st), "cudaStreamSynchronize (verify check)");
                return bad;
            }
        }
        void* h = scratch(n);
        detail::check(cudaMemcpyAsync(h, src, n, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync (verify check)");
        detail::check(cudaStreamSynchronize(st), "cudaStreamSynchronize (verify check)");
        return count_pattern_mismatches_host(h, n, seed);
    }

    // One copy of a pattern; returns the bytes of the destination that differ from it.
    std::uint64_t verify(std::size_t n) {
        const std::uint64_t seed = 0x6d65736870657266ull ^ (static_cast<std::uint64_t>(n) << 3) ^
                                   static_cast<std::uint64_t>(kind_);
        // Source: the pattern (the source is on the executing device when it is a device).
        if (src_.device < 0) fill_pattern_host(src_.ptr(), n, seed);
        else fill_device(src_.ptr(), n, seed, s());
        // Destination: zeros, so a copy that did not happen cannot pass.
        if (dst_.device < 0) {
            std::memset(dst_.ptr(), 0, n);
        } else {
            detail::set_device(dst_.device);
            detail::check(cudaMemsetAsync(dst_.ptr(), 0, n, dst_stream()), "cudaMemsetAsync (verify clear)");
            detail::check(cudaStreamSynchronize(dst_stream()), "cudaStreamSynchronize (verify clear)");
            detail::set_device(exec_device_);
        }
        copy(n);
        stream_->synchronize();
        if (dst_.device < 0) return count_pattern_mismatches_host(dst_.ptr(), n, seed);
        detail::set_device(dst_.device);
        const std::uint64_t bad = count_device(dst_.ptr(), n, seed, dst_stream());
        detail::set_device(exec_device_);
        return bad;
    }

    copy_kind kind_;
    const copy_options& o_;
    side src_, dst_;
    int exec_device_;
    std::optional<detail::stream> stream_, dst_stream_;
    std::optional<detail::event> start_, stop_;
    std::optional<device_buffer> counter_;
    std::optional<pinned_buffer> scratch_;
    bool kernels_ok_ = true;
};

void validate(const copy_options& o) {
    if (o.sizes.empty()) throw core::spec_error("copy sweep without sizes: give sizes such as 4K..1G");
    for (auto n : o.sizes)
        if (n == 0) throw core::spec_error("copy size 0: every size must be at least 1 byte");
    if (!(o.min_batch_seconds >= 0)) throw core::spec_error("min_batch_seconds must be non-negative");
}

}  // namespace

copy_result run_copy_sweep(copy_kind kind, const copy_options& o) {
    validate(o);
    int src = o.device, dst = o.device;
    switch (kind) {
    case copy_kind::h2d: src = -1; break;
    case copy_kind::d2h: dst = -1; break;
    case copy_kind::d2d: break;
    case copy_kind::p2p:
        dst = o.peer_device;
        if (src == dst)
            throw core::spec_error(fmt::format("p2p copy from cuda:{} to itself: use d2d, or name another device", src));
        break;
    }
    if (src >= 0) require_device(src);
    if (dst >= 0) require_device(dst);

    const std::uint64_t max_bytes = *std::max_element(o.sizes.begin(), o.sizes.end());
    // In this order (run_on_all_gpus calls this on a fresh thread per GPU): the executing GPU
    // made current, then the thread bound to that GPU's NUMA node where sysfs knows it, then
    // the buffers allocated, so the pinned host buffer is placed near the GPU it feeds. The
    // binding lasts the sweep (the thread issuing the copies stays near the GPU too) and is
    // undone on return.
    const int exec_device = src >= 0 ? src : dst;
    detail::set_device(exec_device);
    const scoped_numa_binding near_gpu(device_numa_node(exec_device));
    sweeper sw(kind, o, src, dst, max_bytes);
    copy_result r;
    r.kind = kind;
    r.src = sw.src_name();
    r.dst = sw.dst_name();
    if (kind == copy_kind::p2p) {
        r.peer_access = sw.enable_peer_access();
        if (!r.peer_access)
            r.warnings.push_back(fmt::format("no peer access from {} to {}: the driver stages the copy through host "
                                             "memory (no NVLink or PCIe P2P between them)",
                                             r.src, r.dst));
    }
    for (const auto n : o.sizes) {
        if (o.stop.stop_requested()) {
            r.cancelled = true;
            break;
        }
        if (o.before_size) o.before_size(n);
        r.points.push_back(sw.measure(n));
        if (o.on_point) o.on_point(r.points.back());
    }
    if (r.verify_failed())
        r.warnings.push_back(fmt::format("verification failed: {} -> {} copies delivered wrong bytes", r.src, r.dst));
    return r;
}

copy_matrix run_p2p_matrix(const copy_options& o) {
    validate(o);
    copy_matrix m;
    const auto& s = cuda_availability();
    if (!s.ok()) {
        m.waived = s.message;
        return m;
    }
    m.device_count = s.device_count;
    if (s.device_count < 2) {
        m.waived = fmt::format("the GPU-to-GPU matrix needs at least two GPUs: this node has {}", s.device_count);
        return m;
    }
    for (int a = 0; a < s.device_count; ++a)
        for (int b = 0; b < s.device_count; ++b) {
            if (a == b) continue;
            if (o.stop.stop_requested()) return m;
            copy_options pair = o;
            pair.device = a;
            pair.peer_device = b;
            m.pairs.push_back(run_copy_sweep(copy_kind::p2p, pair));
        }
    return m;
}

}  // namespace meshperf::gpu
