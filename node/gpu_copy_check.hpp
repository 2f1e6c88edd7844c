#pragma once
/// The verdicts of `meshperf inspect --gpu-copies`: host->GPU and GPU->host copies on every
/// GPU of the node at once (gpu/all_gpu_copies.hpp, the sweep `meshperf local --copy h2d,d2h
/// --all-gpus --verify` runs), one finding "gpu_copy" per GPU and direction (docs/rails.md,
/// "Host<->GPU copies"):
///   OK        measured and verified, with its GB/s at the size inspect copies; at or above
///             the manifest's h2d_floor_gb_per_s / d2h_floor_gb_per_s when it has one
///   CRITICAL  below that floor; its verification found differing bytes; a copy failed on a
///             GPU (the device's fault, not the node's want of CUDA)
///   UNKNOWN   not measured for a reason that is not a GPU's (no CUDA here, no GPU, the
///             daemon was measuring something else), since the check was asked for
#include "core/local_copy_spec.hpp"
#include "node/inspect.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>

namespace meshperf::node {

/// The size inspect copies on every GPU at once: large enough that a PCIe Gen5 x16 link is
/// at its plateau (docs/gpu.md's sweeps flatten from 8–16 MiB), small enough that h2d and
/// d2h on eight GPUs, verified, take about a second.
inline constexpr std::uint64_t inspect_copy_size = 64ull << 20;

/// The sweep inspect asks for: h2d,d2h at inspect_copy_size, all GPUs at once, verified.
core::local_copy_spec inspect_copy_spec();

/// What the copies gave: a sweep's document, or why there is none.
struct gpu_copy_survey {
    nlohmann::json sweep;       ///< "meshperf.local/1" with "all_gpus"; null when nothing was measured
    std::string none_because;   ///< why nothing was measured (when sweep is null)
    bool device_fault = false;  ///< nothing measured because a copy failed on a GPU: CRITICAL, not UNKNOWN
};

/// Runs inspect_copy_spec() here, in the calling thread, on every GPU CUDA shows this process
/// (gpu::run_local_sweep). Built from gpu_copy_survey.cpp where the CUDA toolkit is, else
/// from gpu_copy_survey_unavailable.cpp. Never throws: CUDA that cannot run here (no driver,
/// no device) is none_because; a copy that fails on a GPU CUDA offered is a device fault.
/// `stop` ends it between batches, with what it measured and "stopped" in the document.
gpu_copy_survey survey_gpu_copies(std::stop_token stop = {});

/// Appends one "gpu_copy" finding per GPU and direction (or one for the node when nothing
/// was measured) and the figures to `r`, and recomputes its state.
void add_gpu_copy_findings(inspect_result& r, const gpu_copy_survey& survey, const std::optional<node_manifest>& expect);

}  // namespace meshperf::node
