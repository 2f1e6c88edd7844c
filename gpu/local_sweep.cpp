#include "gpu/local_sweep.hpp"

#include <algorithm>

namespace meshperf::gpu {

bool local_sweep::verify_failed() const noexcept {
    const auto failed = [](const copy_result& r) { return r.verify_failed(); };
    return std::any_of(copies.begin(), copies.end(), failed) ||
           std::any_of(all_gpus.begin(), all_gpus.end(), [](const all_gpu_copy& a) { return a.verify_failed(); }) ||
           std::any_of(p2p.begin(), p2p.end(), [&](const copy_matrix& m) { return std::any_of(m.pairs.begin(), m.pairs.end(), failed); });
}

local_sweep run_local_sweep(const std::vector<copy_kind>& kinds, copy_options options,
                            const std::function<void(copy_kind, const copy_point&)>& on_point, int all_gpu_count) {
    local_sweep out;
    for (const auto k : kinds) {
        if (options.stop.stop_requested()) break;
        options.on_point = on_point ? std::function<void(const copy_point&)>([&on_point, k](const copy_point& p) { on_point(k, p); })
                                    : std::function<void(const copy_point&)>();
        if (all_gpu_count > 0) out.all_gpus.push_back(run_on_all_gpus(k, all_gpu_count, options));
        else if (k == copy_kind::p2p) out.p2p.push_back(run_p2p_matrix(options));
        else out.copies.push_back(run_copy_sweep(k, options));
    }
    out.stopped = options.stop.stop_requested();
    return out;
}

}  // namespace meshperf::gpu
