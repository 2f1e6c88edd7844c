// RDMA verbs' rules for the specs that name it (core/transport_rules.hpp): queue pairs
// under limits.max_qps, no fixed iteration count for streams, GPU memory the CPU cannot read.
#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "core/transport_rules.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::core {
namespace {

bool rdma_has_test(const run_spec& s, test_kind t) { return std::find(s.tests.begin(), s.tests.end(), t) != s.tests.end(); }

void rdma_streams(const run_spec& s, const run_limits& lim) {
    if (s.streams == 0 || s.streams > lim.max_qps)
        throw spec_error(fmt::format("streams {} is out of range for RDMA: use 1..{} queue pairs per direction (limits.max_qps "
                                     "of this daemon is {}; an operator may raise it in [limits] max_qps)",
                                     s.streams, lim.max_qps, lim.max_qps));
}

void rdma_length(const run_spec& s) {
    if (s.iterations && (rdma_has_test(s, test_kind::bandwidth) || rdma_has_test(s, test_kind::bidir)))
        throw spec_error("--iterations is not supported for RDMA bandwidth and bidir points: use --duration or the "
                         "adaptive default");
}

// GPUDirect RDMA puts the QP buffers in GPU memory, which the CPU cannot read: --verify
// (checked from the CPU) and WRITE latency (the CPU polls the last byte) cannot work there.
void rdma_memory(const run_spec& s) {
    if (!uses_gpu_memory(s)) return;
    if (s.verify)
        throw spec_error("--verify with GPU memory over RDMA: the check reads the buffers from the CPU, which cannot "
                         "read GPU memory; drop --verify (TCP with GPU memory does verify)");
    if (s.op == rdma_op::write && rdma_has_test(s, test_kind::latency))
        throw spec_error("RDMA WRITE latency with GPU memory: the loop polls the receive buffer from the CPU, which "
                         "cannot read GPU memory; use --op send for latency");
}

std::vector<std::string> rdma_path_details(const run_spec& s) {
    std::vector<std::string> out{std::string(to_string(s.op))};
    if (!s.rdma_device.empty()) out.push_back(s.rdma_device);
    return out;
}

}  // namespace

transport_rules rdma_rules() {
    return {.name = "rdma",
            .polls = true,
            .device_fields = true,
            .check_streams = rdma_streams,
            .check_length = rdma_length,
            .check_memory = rdma_memory,
            .path_details = rdma_path_details};
}

}  // namespace meshperf::core
