#pragma once
/// What `meshperf local` measures in one go, on this node or on a daemon's (POST /v1/local):
/// the copy directions asked for, in order, and the GPU-to-GPU matrix when p2p is among
/// them. Plain C++; the JSON form is gpu::to_json(const local_sweep&) in copy_json.hpp.
#include "gpu/all_gpu_copies.hpp"
#include "gpu/copy_result.hpp"
#include "gpu/copy_sweep.hpp"

#include <functional>
#include <vector>

namespace meshperf::gpu {

struct local_sweep {
    std::vector<copy_result> copies;  ///< h2d, d2h, d2d sweeps, in the order asked
    std::vector<copy_matrix> p2p;     ///< one matrix when p2p was asked
    std::vector<all_gpu_copy> all_gpus;  ///< with all_gpu_count: each kind on every GPU at once, in the order asked
    /// options.stop fired: the sweep running then is cut short (cancelled) and the kinds
    /// after it were not run.
    bool stopped = false;

    /// Some point's verification found differing bytes.
    bool verify_failed() const noexcept;
};

/// Runs run_copy_sweep for each kind but p2p and run_p2p_matrix for p2p, in the order of
/// `kinds`, with `options` (its on_point is replaced: `on_point(kind, point)` is called after
/// each size instead). With `all_gpu_count` > 0 each kind runs instead on devices
/// 0..all_gpu_count−1 at once (run_on_all_gpus; on_point then comes from their threads, one
/// at a time); p2p is refused there. Throws as run_copy_sweep and run_on_all_gpus do.
local_sweep run_local_sweep(const std::vector<copy_kind>& kinds, copy_options options,
                            const std::function<void(copy_kind, const copy_point&)>& on_point = {}, int all_gpu_count = 0);

}  // namespace meshperf::gpu
