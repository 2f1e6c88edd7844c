#pragma once
/// JSON form of local copy sweeps, for `meshperf local` and the daemon. Host compiler only.
#include "gpu/copy_result.hpp"
#include "gpu/copy_sweep.hpp"
#include "gpu/local_sweep.hpp"

#include <nlohmann/json.hpp>

namespace meshperf::gpu {

/// {"size_bytes", "gb_per_s", "gb_per_s_min", "gb_per_s_max", "seconds_per_copy",
///  "batches", "copies_per_batch", "verify", "verified", "mismatched_bytes"}.
nlohmann::json to_json(const copy_point&);
/// {"copy": "h2d", "src": "host", "dst": "cuda:0", "peer_access", "cancelled",
///  "verify_failed", "points": [...], "warnings": [...]}.
nlohmann::json to_json(const copy_result&);
/// {"device_count", "waived" (null unless waived), "pairs": [...]}.
nlohmann::json to_json(const copy_matrix&);
/// {"copy": "h2d", "devices": N, "verify_failed", "points": [{"size_bytes", "gb_per_s_sum",
///  "gb_per_s_min", "slowest"}...], "per_gpu": [copy_result...]}.
nlohmann::json to_json(const all_gpu_copy&);
/// The document of `meshperf local --format json` and POST /v1/local:
/// {"schema": "meshperf.local/1", "copies": [copy_result...], "p2p": [copy_matrix...]},
/// and "all_gpus": [all_gpu_copy...] when the sweep ran on every GPU at once.
/// (The daemon adds "host", and "stopped" when its time cap cut the sweep short.)
nlohmann::json to_json(const local_sweep&);

}  // namespace meshperf::gpu
