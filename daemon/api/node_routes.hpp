#pragma once
/// The node's part of the API: GET /v1/info's rails (the NICs that carry traffic, each with
/// its nearest GPUs in NCCL's words) and /v1/inspect (the node's own health: PCIe links,
/// ACS, GPU↔NIC affinity, and with POST a manifest to compare with). Everything is read
/// below the daemon's --sysfs-root; the rails are chosen by the configuration's [rails].
#include "daemon/api/api_routes.hpp"

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::daemon {

/// {"rails": [...], "gpu_rail_pairs": [...]} for GET /v1/info (node/inventory.hpp);
/// `gpus` is /v1/info's CUDA part (gpu_info()), whose ordinals the GPUs are given. Read
/// at most once a second and by one caller at a time (others get the previous answer, at
/// most 1 s plus one scan old); /v1/inspect always reads. Blocking: off the I/O thread.
nlohmann::json node_info(const api_state&, const nlohmann::json& gpus);

/// GET /v1/inspect (`body` empty) or POST /v1/inspect with {"expect": {manifest keys}}:
/// 200 with the inspection document (node/inspect.hpp to_json) whatever the verdict; 400
/// naming the problem for a body that is not JSON, an unknown top-level key or a bad
/// manifest key. The inspection's series go to /metrics too (metrics_registry::record_inspection)
/// unless the daemon inspects on a schedule ([inspect] interval > 0), whose series they are then.
/// Blocking (sysfs, configuration space, the loopback): call it off the I/O thread.
/// `abandoned` (may be empty): true once the client has gone; the inspection then stops at
/// its next stage, records nothing and answers 503 (which nobody reads).
api_reply handle_inspect(const api_state&, const std::string& body, bool post, std::function<bool()> abandoned = {});

/// How many inspections the API runs at once; more are refused (inspection_busy_reply).
inline constexpr int max_api_inspections = 1;
/// The Retry-After of that refusal, in seconds.
inline constexpr int inspection_retry_after_s = 5;

/// One of the max_api_inspections places, held until the last copy of the pointer goes;
/// null when all are taken. Taken on the I/O thread before the work is queued, so a flood
/// of POST /v1/inspect costs neither memory nor worker threads.
std::shared_ptr<void> take_inspection_slot();

/// 503 {"error": "...already inspecting...", "retry_after_s": 5} with Retry-After: 5.
api_reply inspection_busy_reply();

/// GET /v1/inspect/last: 200 with the latest scheduled inspection (the /v1/inspect document
/// plus "inspected_at" (UTC), "unix_seconds", "age_s", "duration_s", "inspections" (how many
/// so far) and "schedule" {interval_s, jitter_s, loopback, manifest}); 404 saying why before
/// the first one or when the daemon has no schedule. Memory only: fine on the I/O thread.
api_reply handle_inspect_last(const api_state&);

}  // namespace meshperf::daemon
