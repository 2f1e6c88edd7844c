// inspect --gpu-copies where meshperf is built with CUDA: the copies run here.
#include "node/gpu_copy_check.hpp"

#include "gpu/copy_json.hpp"
#include "gpu/local_sweep.hpp"
#include "gpu/status.hpp"

#include <fmt/format.h>

namespace meshperf::node {

gpu_copy_survey survey_gpu_copies(std::stop_token stop) {
    const auto& cuda = gpu::cuda_availability();
    if (!cuda.ok()) {
        // The probe's advice is the sweep's ("or measure with --memory host"); copies need a GPU.
        auto why = cuda.message;
        if (const auto at = why.find(", or measure with --memory host"); at != std::string::npos) why.erase(at);
        return {nullptr, why, false};
    }
    const auto spec = inspect_copy_spec();
    gpu::copy_options opts;
    opts.sizes = spec.sizes;
    opts.verify = spec.verify;
    opts.stop = stop;
    try {
        const auto sweep = gpu::run_local_sweep(gpu::parse_copy_kinds(spec.copies), opts, {}, cuda.device_count);
        auto doc = gpu::to_json(sweep);
        if (stop.stop_requested()) doc["stopped"] = "the inspection was stopped (the daemon is shutting down)";
        return {std::move(doc), "", false};
    } catch (const std::exception& e) {
        // CUDA said the node can run it: a copy that fails now is a device's fault.
        return {nullptr, fmt::format("on {} GPUs at once: {}", cuda.device_count, e.what()), true};
    }
}

}  // namespace meshperf::node
