#pragma once
/// One copy direction (h2d, d2h, d2d) on every GPU of the node at once (`meshperf local
/// --all-gpus`): the node health check MegaScale and Azure's node checks run before a job,
/// where a GPU whose PCIe link or root port is degraded, or a host whose memory cannot feed
/// all GPUs together, shows. One thread per GPU runs its own sweep; a barrier starts each
/// size on every GPU together, and a GPU done timing a size keeps copying it until every GPU
/// is, so each GPU's timed batches run with every other GPU copying. Plain C++; the sweep
/// itself is run_copy_sweep (copy_sweep.hpp), or a test's.
#include "gpu/copy_result.hpp"
#include "gpu/copy_sweep.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace meshperf::gpu {

/// One size measured on every GPU at once.
struct all_gpu_point {
    std::uint64_t size_bytes = 0;
    double gb_per_s_sum = 0;  ///< the GPUs' figures (each the median of its batches) added up
    double gb_per_s_min = 0;  ///< the slowest GPU's figure
    std::string slowest;      ///< that GPU ("cuda:3")
};

/// One direction on every GPU at once.
struct all_gpu_copy {
    copy_kind kind = copy_kind::h2d;
    std::vector<copy_result> per_gpu;    ///< one per GPU, in device order
    std::vector<all_gpu_point> points;   ///< the sizes every GPU measured, in order

    /// Some GPU's verification found differing bytes.
    bool verify_failed() const noexcept;
};

/// Runs one device's sweep (run_copy_sweep, or a stand-in in tests).
using device_sweep = std::function<copy_result(copy_kind, const copy_options&)>;

/// Runs `kind` (not p2p: run_p2p_matrix covers GPU pairs) on devices 0..device_count−1 at
/// once: one thread each with `options` and its device, each size begun together (a barrier
/// before each size; a thread whose sweep ends, throws or is stopped leaves the barrier, so
/// the others never wait for it), and each GPU loading the size (untimed copies) after its
/// timed batches until every GPU's are done (copy_options::timed_done, keep_loading). The first exception of any thread stops the others (at
/// their next size) and is rethrown after all have joined; options.stop stops all.
/// options.on_point is called under a lock, from the GPUs' threads. Each thread's first CUDA
/// work is the sweep's: run_copy_sweep makes its GPU current and binds the thread to the
/// GPU's NUMA node before it allocates the pinned host buffer. Throws
/// core::spec_error for p2p or a device_count below 1.
all_gpu_copy run_on_all_gpus(copy_kind kind, int device_count, const copy_options& options,
                             const device_sweep& sweep = run_copy_sweep);

/// The per-size sums and minima of per-GPU results (the sizes at the same index in every
/// result; a GPU cut short ends the list there). Pure; run_on_all_gpus uses it.
std::vector<all_gpu_point> combine_all_gpus(const std::vector<copy_result>& per_gpu);

}  // namespace meshperf::gpu
