#pragma once
/// Each GPU's host<->GPU copy rate with every GPU copying at once, read from a copy sweep's
/// document (gpu::to_json(local_sweep), "meshperf.local/1" with "all_gpus"), and judged
/// against the manifest's floors (h2d_floor_gb_per_s, d2h_floor_gb_per_s). `meshperf local
/// --all-gpus --expect` and `meshperf inspect --gpu-copies` (node/gpu_copy_check.hpp) both
/// judge through here, so a daemon's sweep and one in this process read the same. Pure.
#include "node/manifest.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::node {

/// One GPU's figure in one direction, at the largest size every GPU measured.
struct gpu_copy_figure {
    std::string copy;              ///< "h2d", "d2h", "d2d"
    std::string gpu;               ///< "cuda:3"
    std::uint64_t size_bytes = 0;  ///< the largest size every GPU measured; 0: none
    double gb_per_s = 0;           ///< its figure there (the median of its batches); 0: no point
    bool verify_failed = false;    ///< its verification found differing bytes
};

/// Every GPU's figure of every "all_gpus" direction in `doc`, in the document's order.
/// Nothing for a document without "all_gpus" or with malformed parts (never throws).
std::vector<gpu_copy_figure> all_gpu_copy_figures(const nlohmann::json& doc);

/// One GPU's figure against its floor.
struct copy_floor_finding {
    std::string copy;            ///< "h2d", "d2h"
    std::string gpu;             ///< "cuda:3"
    std::uint64_t size_bytes = 0;  ///< the largest size it measured
    double gb_per_s = 0;         ///< its figure there (the median of its batches)
    double floor_gb_per_s = 0;
    bool below = false;
};

/// For each "all_gpus" direction with a floor in `expect`, each GPU's figure at the largest
/// size every GPU measured. A direction with a floor that the sweep did not run, or a GPU
/// without a point, is a finding that is below (nothing measured is not a pass).
std::vector<copy_floor_finding> judge_copy_floors(const nlohmann::json& doc, const node_manifest& expect);

/// The verdict as text, one line per GPU below its floor after a summary line ("copy floors:
/// 16 GPU figures, 1 below: ..."), and the exit code: 0 when none is below, 2 (CRITICAL)
/// otherwise; "" and 0 without floors.
struct copy_floor_verdict {
    std::string text;
    int exit_code = 0;
};
copy_floor_verdict copy_floor_text(const std::vector<copy_floor_finding>& findings);

}  // namespace meshperf::node
