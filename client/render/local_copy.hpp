#pragma once
/// Renders the document of a local copy sweep ({"schema": "meshperf.local/1", ...}, from this
/// process or from a daemon's POST /v1/local) as text tables. Works on the JSON, so a
/// meshperf built without CUDA renders a daemon's sweep too.
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::client {

/// One table per copy direction (size, GB/s, min, max, copies/batch, verified) with its
/// warnings, then the p2p matrix (GB/s at the largest size) or why it was waived, then each
/// direction run on all GPUs at once (per size: the sum, the slowest GPU, each GPU). A "host"
/// field gives a first line naming the node; a "stopped" field a last line saying why the
/// sweep stopped early. Throws nlohmann::json::exception when the document lacks a field
/// this renderer needs (the caller says where the document came from).
std::string render_local_table(const nlohmann::json& doc);

/// Some point of the document (copies, p2p pairs, all-GPU copies) was verified and found differing bytes.
bool local_verify_failed(const nlohmann::json& doc);

}  // namespace meshperf::client
