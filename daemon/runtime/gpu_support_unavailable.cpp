// GPUs in a meshperfd built without the CUDA toolkit.
#include "core/error.hpp"
#include "daemon/runtime/gpu_support.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

namespace {
constexpr const char* why = "GPU support is not built into this meshperfd (nvcc was not found at build time; rebuild with -DMESHPERF_WITH_CUDA=ON)";
}

nlohmann::json gpu_info() { return {{"available", false}, {"reason", why}}; }

void require_memory_domain(const std::string& domain, const std::string& side) {
    if (domain == "host") return;
    throw core::spec_error(fmt::format("{} memory: {}: {}", side, domain, why));
}

transport::tcp::staged_stream_factory tcp_stream_memory(const std::string& domain, const core::run_spec&) {
    require_memory_domain(domain, "TCP");
    return {};
}

std::shared_ptr<const transport::rdma::device_memory> rdma_device_memory(const std::string& domain) {
    require_memory_domain(domain, "RDMA");
    return nullptr;
}

transport::mesh::device_memory_factory collective_memory_for(const std::string& domain) {
    require_memory_domain(domain, "collective");
    return {};
}

std::vector<std::string> memory_notes(const std::string&, const std::string&, const std::string&, bool) {
    return {};
}

}  // namespace meshperf::daemon
