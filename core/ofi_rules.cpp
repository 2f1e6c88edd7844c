// libfabric's rules for the specs that name it (core/transport_rules.hpp): endpoints under
// limits.max_qps, no fixed iteration count for streams, host memory, send/receive operations,
// one path (no rails yet).
#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "core/transport_rules.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::core {
namespace {

bool ofi_has_test(const run_spec& s, test_kind t) { return std::find(s.tests.begin(), s.tests.end(), t) != s.tests.end(); }

void ofi_streams(const run_spec& s, const run_limits& lim) {
    if (s.streams == 0 || s.streams > lim.max_qps)
        throw spec_error(fmt::format("streams {} is out of range for libfabric: use 1..{} endpoints per direction (limits.max_qps "
                                     "of this daemon is {}; an operator may raise it in [limits] max_qps)",
                                     s.streams, lim.max_qps, lim.max_qps));
    if (!s.rails.empty())
        throw spec_error("rails over libfabric are not in this meshperf yet: measure each rail's provider domain alone, or "
                         "use --transport tcp or rdma for --rails");
    if (s.ofi_op == ofi_op::write || s.ofi_op == ofi_op::read)
        throw spec_error(fmt::format("--ofi-op {} (RMA) is not in this meshperf yet: use --ofi-op tagged or msg", to_string(s.ofi_op)));
}

void ofi_length(const run_spec& s) {
    if (s.iterations && (ofi_has_test(s, test_kind::bandwidth) || ofi_has_test(s, test_kind::bidir)))
        throw spec_error("--iterations is not supported for libfabric bandwidth and bidir points: use --duration or the "
                         "adaptive default");
}

void ofi_memory(const run_spec& s) {
    if (uses_gpu_memory(s))
        throw spec_error("GPU memory over libfabric (FI_HMEM) is not in this meshperf yet: use --memory host, or "
                         "--transport rdma (GPUDirect) or tcp (staged) for GPU memory");
}

std::vector<std::string> ofi_path_details(const run_spec& s) {
    std::vector<std::string> out{std::string(to_string(s.ofi_op))};
    if (!s.ofi_provider.empty()) out.push_back(s.ofi_provider);
    return out;
}

}  // namespace

transport_rules ofi_rules() {
    return {.name = "ofi",
            .polls = true,
            .device_fields = false,
            .check_streams = ofi_streams,
            .check_length = ofi_length,
            .check_memory = ofi_memory,
            .own_fields = {"ofi_provider", "ofi_op"},
            .path_details = ofi_path_details};
}

}  // namespace meshperf::core
