#include "daemon/gpu_support.hpp"

#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/inventory_json.hpp"
#include "gpu/status.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

nlohmann::json gpu_info() {
    const auto& st = gpu::cuda_availability();
    nlohmann::json out = {{"available", st.ok()}, {"driver_version", st.driver_version}, {"runtime_version", st.runtime_version}};
    if (!st.ok()) {
        out["reason"] = st.message;
        return out;
    }
    try {
        out["inventory"] = gpu::to_json(gpu::take_inventory());
    } catch (const std::exception& e) {
        out["reason"] = e.what();
    }
    return out;
}

void require_memory_domain(const std::string& domain, const std::string& side) {
    if (domain == "host") return;
    const int index = std::stoi(domain.substr(5));
    gpu::require_device(index);  // throws the classified reason: no driver, too old, no device
    throw core::spec_error(fmt::format("{} memory {}: the GPU is usable, but this meshperfd does not yet move GPU memory "
                                       "in sweeps (staged TCP and GPUDirect RDMA are not wired in); use `meshperf local` "
                                       "for copy-engine rates",
                                       side, domain));
}

}  // namespace meshperf::daemon
