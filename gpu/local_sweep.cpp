#include "gpu/local_sweep.hpp"

#include <algorithm>

namespace meshperf::gpu {

bool local_sweep::verify_failed() const noexcept {
    const auto failed = [](const copy_result& r) { return r.verify_failed(); };
    return std::any_of(copies.begin(), copies.end(), failed) ||
           std::any_of(p2p.begin(), p2p.end(), [&](const copy_matrix& m) { return std::any_of(m.pairs.begin(), m.pairs.end(), failed); });
}

local_sweep run_local_sweep(const std::vector<copy_kind>& kinds, copy_options options,
                            const std::function<void(copy_kind, const copy_point&)>& on_point) {
    local_sweep out;
    for (const auto k : kinds) {
        if (options.stop.stop_requested()) break;
        options.on_point = on_point ? std::function<void(const copy_point&)>([&on_point, k](const copy_point& p) { on_point(k, p); })
                                    : std::function<void(const copy_point&)>();
        if (k == copy_kind::p2p) out.p2p.push_back(run_p2p_matrix(options));
        else out.copies.push_back(run_copy_sweep(k, options));
    }
    out.stopped = options.stop.stop_requested();
    return out;
}

}  // namespace meshperf::gpu
