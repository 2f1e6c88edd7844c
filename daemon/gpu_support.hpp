#pragma once
/// The daemon's view of GPUs. Built from gpu_support.cpp where the CUDA toolkit is, else
/// from gpu_support_unavailable.cpp; nothing else in the daemon knows which.
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::daemon {

/// GET /v1/info's GPU part: {"available": bool, "reason"?: ..., inventory fields...}.
nlohmann::json gpu_info();

/// Checks a memory domain of a run ("host" passes). For "cuda:N" it throws with the
/// precise reason when the GPU cannot be used (no driver, driver too old, no device,
/// no such index) and, when it could, says what this build does not do yet.
void require_memory_domain(const std::string& domain, const std::string& side);

}  // namespace meshperf::daemon
