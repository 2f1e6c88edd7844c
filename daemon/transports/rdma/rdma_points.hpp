#pragma once
/// The RDMA side of peer sessions: the RDMA entry's sweep plug-ins and inventory
/// (daemon/transports/rdma/entry.cpp). Built only where libibverbs is found.
#include "core/result.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/sweep/point_transport.hpp"

#include <nlohmann/json.hpp>
#include <vector>

namespace meshperf::daemon {

/// GET /v1/info's RDMA part: {"available": bool, "reason"?: ..., "devices": [...]}.
nlohmann::json rdma_info();

/// The initiator's RDMA transport for a run: at open, this side's endpoint (device, port and
/// GID from the spec and the session's address; GPU memory through GPUDirect RDMA), the
/// endpoint exchange, and the path's sentences in the result. `byte_cap`: the agreed
/// max_bytes_per_point (per direction); an adaptive or duration point stops once a flow
/// has moved it. `cpus`: this side's CPUs for the run, where every point's runner threads
/// are pinned (empty: unpinned). `hooks`: the daemon's test hooks (corrupt_rdma; all off in
/// service), read here once for the run.
std::unique_ptr<initiator_transport> make_rdma_initiator_transport(const core::run_spec& spec,
                                                                   std::uint64_t byte_cap, std::vector<int> cpus,
                                                                   const sweep_test_hooks& hooks);

/// The responder's RDMA transport for a session: the endpoint exchange at open; its own
/// active queue pairs stop once the bytes it counts reach `byte_cap`; its runner threads
/// are pinned to `cpus`; `hooks` as for the initiator.
std::unique_ptr<responder_transport> make_rdma_responder_transport(const core::run_spec& spec,
                                                                   std::uint64_t byte_cap, std::vector<int> cpus,
                                                                   const sweep_test_hooks& hooks);

}  // namespace meshperf::daemon
