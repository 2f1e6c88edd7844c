#include "gpu/all_gpu_copies.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <fmt/format.h>
#include <mutex>
#include <stop_token>
#include <thread>

namespace meshperf::gpu {

bool all_gpu_copy::verify_failed() const noexcept {
    return std::any_of(per_gpu.begin(), per_gpu.end(), [](const copy_result& r) { return r.verify_failed(); });
}

std::vector<all_gpu_point> combine_all_gpus(const std::vector<copy_result>& per_gpu) {
    std::vector<all_gpu_point> out;
    if (per_gpu.empty()) return out;
    std::size_t n = per_gpu.front().points.size();
    for (const auto& r : per_gpu) n = std::min(n, r.points.size());
    for (std::size_t i = 0; i < n; ++i) {
        all_gpu_point p;
        p.size_bytes = per_gpu.front().points[i].size_bytes;
        for (const auto& r : per_gpu) {
            const auto& q = r.points[i];
            if (q.size_bytes != p.size_bytes) return out;  // not the same sweep: stop where they differ
            p.gb_per_s_sum += q.gb_per_s;
            if (p.slowest.empty() || q.gb_per_s < p.gb_per_s_min) {
                p.gb_per_s_min = q.gb_per_s;
                p.slowest = r.kind == copy_kind::d2h ? r.src : r.dst;  // the GPU end
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

all_gpu_copy run_on_all_gpus(copy_kind kind, int device_count, const copy_options& options, const device_sweep& sweep) {
    if (kind == copy_kind::p2p)
        throw core::spec_error("p2p on all GPUs at once: the GPU-to-GPU matrix already measures every pair; --all-gpus takes "
                               "h2d, d2h and d2d");
    if (device_count < 1) throw core::spec_error(fmt::format("copies on all GPUs need at least one GPU: this node has {}", device_count));
    all_gpu_copy out;
    out.kind = kind;
    out.per_gpu.resize(static_cast<std::size_t>(device_count));
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(device_count));
    // GPUs still sweeping, and of those the ones done with the current size's timed batches
    // (reset when every GPU has begun the next size: the barrier's completion step).
    std::atomic<int> active{device_count}, timed{0};
    std::barrier sizes_begin(device_count, [&timed]() noexcept { timed.store(0); });
    // The caller's stop, or one GPU's failure, stops every GPU at its next size.
    std::stop_source all;
    std::stop_callback forward(options.stop, [&all] { all.request_stop(); });
    std::mutex point_lock;
    {
        std::vector<std::jthread> threads;
        for (int d = 0; d < device_count; ++d)
            threads.emplace_back([&, d] {
                copy_options own = options;
                own.device = d;
                own.stop = all.get_token();
                own.before_size = [&](std::uint64_t) { sizes_begin.arrive_and_wait(); };
                // A GPU done timing a size keeps copying it until every GPU is: no GPU's timed
                // batches run while another has gone quiet (nor after a failure or a stop).
                own.timed_done = [&] { timed.fetch_add(1); };
                own.keep_loading = [&] { return !all.stop_requested() && timed.load() < active.load(); };
                if (options.on_point)
                    own.on_point = [&](const copy_point& p) {
                        const std::lock_guard lock(point_lock);
                        options.on_point(p);
                    };
                try {
                    out.per_gpu[static_cast<std::size_t>(d)] = sweep(kind, own);
                } catch (...) {
                    errors[static_cast<std::size_t>(d)] = std::current_exception();
                    all.request_stop();
                }
                // Between sizes (never inside one): leave, so the others' next sizes need not wait.
                active.fetch_sub(1);
                sizes_begin.arrive_and_drop();
            });
    }
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    out.points = combine_all_gpus(out.per_gpu);
    return out;
}

}  // namespace meshperf::gpu
