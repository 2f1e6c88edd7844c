// POST /v1/local in a meshperfd built with CUDA.
#include "daemon/api/local_copy_route.hpp"

#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/local_sweep.hpp"
#include "gpu/status.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {

api_reply handle_local_copy(api_state& s, const std::string& body, std::shared_ptr<local_copy_job>& job) {
    job.reset();
    core::local_copy_spec req;
    std::vector<gpu::copy_kind> kinds;
    try {
        req = read_local_copy_body(body);
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    try {
        kinds = gpu::parse_copy_kinds(req.copies);  // checked by the spec already: cannot fail
    } catch (const core::spec_error& e) {
        return api_error(400, fmt::format("field 'copies': {}", e.what()));
    }
    const auto& cuda = gpu::cuda_availability();
    if (!cuda.ok()) {
        auto r = api_error(503, cuda.message);
        r.body["cuda_state"] = std::string(gpu::to_string(cuda.state));
        return r;
    }
    const bool needs_device = std::any_of(kinds.begin(), kinds.end(), [](auto k) { return k != gpu::copy_kind::p2p; });
    if (needs_device && !req.all_gpus && req.device >= cuda.device_count)
        return api_error(400, fmt::format("field 'device': cuda:{} does not exist: this node has {} CUDA device{}", req.device,
                                          cuda.device_count, cuda.device_count == 1 ? "" : "s"));
    const auto cap = std::min<std::chrono::milliseconds>(
        local_copy_time_cap, std::chrono::milliseconds(static_cast<long long>(s.ctx.limits.max_run_s * 1000)));
    const auto host = s.ctx.host.hostname;
    const int all_gpu_count = req.all_gpus ? cuda.device_count : 0;
    auto sweep = [req, kinds, cap, host, all_gpu_count](std::stop_token stop) {
        gpu::copy_options opts;
        opts.sizes = req.sizes;
        opts.device = req.device;
        opts.verify = req.verify;
        opts.stop = stop;
        const auto result = gpu::run_local_sweep(kinds, opts, {}, all_gpu_count);
        auto doc = gpu::to_json(result);
        doc["host"] = host;
        if (result.stopped)
            doc["stopped"] = fmt::format("the copy sweep reached this daemon's time cap ({} s) and stopped: what it measured "
                                         "is here; sweep fewer sizes or copies per request",
                                         std::chrono::duration_cast<std::chrono::seconds>(cap).count());
        return doc;
    };
    std::string holder;
    const auto where = req.all_gpus ? fmt::format("all {} GPUs at once", cuda.device_count) : fmt::format("cuda:{}", req.device);
    job = local_copy_job::start(s.ctx.gate, fmt::format("copy sweep {} on {}", req.copies, where), std::move(sweep),
                                cap, holder);
    if (!job) return api_reply_of(local_copy_busy_reply(holder));
    return {202, {{"started", true}}};  // placeholder: the answer is job->reply()
}

}  // namespace meshperf::daemon
