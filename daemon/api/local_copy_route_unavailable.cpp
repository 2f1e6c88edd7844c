// POST /v1/local in a meshperfd built without the CUDA toolkit: the request is checked (a
// bad one still gets its 400), then answered with why no copy sweep can run here.
#include "daemon/api/local_copy_route.hpp"

#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "daemon/runtime/gpu_support.hpp"

namespace meshperf::daemon {

api_reply handle_local_copy(api_state&, const std::string& body, std::shared_ptr<local_copy_job>& job) {
    job.reset();
    try {
        read_local_copy_body(body);
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    // The sentence /v1/info gives for this daemon's GPUs.
    auto r = api_error(503, gpu_info().value("reason", "GPU support is not built into this meshperfd"));
    r.body["cuda_state"] = "not_built";
    return r;
}

}  // namespace meshperf::daemon
