#pragma once
/// `meshperf local --all-gpus --expect node.toml`: each GPU's host<->GPU copy rate, every GPU
/// copying at once, against the manifest's floor (h2d_floor_gb_per_s, d2h_floor_gb_per_s).
/// Works on the sweep's JSON document (gpu::to_json(local_sweep)), so a daemon's sweep is
/// judged the same way as one in this process. Pure.
#include "node/manifest.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::client {

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
std::vector<copy_floor_finding> judge_copy_floors(const nlohmann::json& doc, const node::node_manifest& expect);

/// The verdict as text, one line per GPU below its floor after a summary line ("copy floors:
/// 16 GPU figures, 1 below: ..."), and the exit code: 0 when none is below, 2 (CRITICAL)
/// otherwise; "" and 0 without floors.
struct copy_floor_verdict {
    std::string text;
    int exit_code = 0;
};
copy_floor_verdict copy_floor_text(const std::vector<copy_floor_finding>& findings);

}  // namespace meshperf::client
