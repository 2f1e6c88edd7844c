#pragma once
/// The daemon's view of GPUs. Built from gpu_support.cpp where the CUDA toolkit is, else
/// from gpu_support_unavailable.cpp; nothing else in the daemon knows which.
#include "core/run_spec.hpp"
#include "transport/mesh/device_memory.hpp"
#include "transport/rdma/device_memory.hpp"
#include "transport/tcp/staged_stream.hpp"

#include <memory>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// GET /v1/info's GPU part: {"available": bool, "reason"?: ..., inventory fields...}.
nlohmann::json gpu_info();

/// Checks a memory domain of a run ("host" passes). For "cuda:N" it throws with the
/// precise reason when the GPU cannot be used: no driver, driver too old, no device, no
/// such index, or a build without CUDA. `side` ("initiator", "peer") starts the message.
void require_memory_domain(const std::string& domain, const std::string& side);

/// The memory of this side's TCP streams in `domain`: an empty factory for "host"; for
/// "cuda:N" one that gives each stream its device buffers on cuda:N (the source filled with
/// the verify pattern) and pinned staging chunks (gpu::staging; chunks of
/// min(message, 1 MiB), four of them). Throws like require_memory_domain.
transport::tcp::staged_stream_factory tcp_stream_memory(const std::string& domain, const core::run_spec& spec);

/// Device memory for this side's RDMA buffers in `domain`: null for "host"; for "cuda:N"
/// the GPU's allocator (device_buffer), its dma-buf export and its registration
/// capabilities. Throws like require_memory_domain.
std::shared_ptr<const transport::rdma::device_memory> rdma_device_memory(const std::string& domain);

/// The factory of a collective run's buffers in `domain` (transport/mesh/device_memory.hpp):
/// empty for "host"; for "cuda:N" buffers on that GPU (the sum a CUDA kernel). Throws like
/// require_memory_domain where the GPU cannot be used.
transport::mesh::device_memory_factory collective_memory_for(const std::string& domain);

/// Sentences for the result about `side`'s memory `domain` on this node (empty for host
/// memory): the GPU and, `staged_through_host`, how the transport stages it through pinned
/// host chunks (TCP), and a warning when the GPU and `nic` (the interface or RDMA device
/// carrying the run) sit under different PCIe root complexes.
std::vector<std::string> memory_notes(const std::string& domain, const std::string& side, const std::string& nic,
                                      bool staged_through_host);

}  // namespace meshperf::daemon
