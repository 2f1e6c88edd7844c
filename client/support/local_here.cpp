// meshperf local: the copy sweep in this process, where meshperf is built with CUDA.
#include "client/support/local_here.hpp"

#include "client/support/cli_wording.hpp"
#include "client/support/daemon_client.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/local_sweep.hpp"
#include "gpu/status.hpp"

#include <cstdio>

namespace meshperf::client {

nlohmann::json sweep_here(const core::local_copy_spec& spec, bool progress) {
    std::vector<gpu::copy_kind> kinds;
    try {
        kinds = gpu::parse_copy_kinds(spec.copies);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, with_option_name(e.what(), "copies", "--copy"));
    }
    const auto& status = gpu::cuda_availability();
    if (!status.ok()) throw client_error(exit_run_failed, for_local_command(status.message));
    gpu::copy_options opts;
    opts.sizes = spec.sizes;
    opts.device = spec.device;
    opts.verify = spec.verify;
    try {
        const auto sweep = gpu::run_local_sweep(
            kinds, opts,
            [progress](gpu::copy_kind k, const gpu::copy_point& p) {
                if (progress)
                    std::fprintf(stderr, "%s %s: %.2f GB/s\n", std::string(gpu::to_string(k)).c_str(),
                                 core::format_size(p.size_bytes).c_str(), p.gb_per_s);
            },
            spec.all_gpus ? status.device_count : 0);
        return gpu::to_json(sweep);
    } catch (const std::system_error& e) {
        throw client_error(exit_run_failed, e.what());
    }
}

}  // namespace meshperf::client
