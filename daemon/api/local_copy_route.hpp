#pragma once
/// POST /v1/local: a copy sweep (host<->GPU, GPU<->GPU) on this daemon's node, answered with
/// the document `meshperf local --format json` prints, plus "host". Built from
/// local_copy_route.cpp where the CUDA toolkit is, else from local_copy_route_unavailable.cpp
/// (which checks the request and answers, as /v1/info does, that GPU support is not built in).
#include "daemon/api/api_routes.hpp"
#include "core/local_copy_spec.hpp"
#include "daemon/runs/local_copy_job.hpp"

#include <memory>
#include <string>

namespace meshperf::daemon {

/// The body of POST /v1/local as a spec (core::local_copy_spec_from_json). Throws
/// core::spec_error naming the field, or saying the body is not JSON. Both builds.
core::local_copy_spec read_local_copy_body(const std::string& body);

/// A copy job's answer (daemon/runs/local_copy_job.hpp) as the API writes it: JSON.
inline api_reply api_reply_of(const local_copy_reply& r) {
    api_reply out{r.status, r.body};
    out.retry_after_s = r.retry_after_s;
    return out;
}

/// Checks the body (read_local_copy_body) and this node's GPUs, and starts the
/// sweep. Answers at once, with `job` left null, when it cannot start:
/// - 400 for a bad body (the message names the field) or a device this node does not have;
/// - 503 {"error", "cuda_state"} when GPUs cannot be used here: the classified reason of
///   gpu::cuda_availability() ("no NVIDIA driver ...", "no CUDA device ...", ...), or
///   "not_built" for a meshperfd built without CUDA; no Retry-After (it will not change);
/// - 503 with Retry-After (local_copy_busy_reply) while a measurement holds the gate.
/// Otherwise `job` is set and the answer is job->reply() once job->done() (the returned
/// reply is then a 202 placeholder, never sent). I/O thread; never blocks on a GPU.
api_reply handle_local_copy(api_state&, const std::string& body, std::shared_ptr<local_copy_job>& job);

}  // namespace meshperf::daemon
