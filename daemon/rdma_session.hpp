#pragma once
/// The RDMA side of peer sessions. Built from rdma_session.cpp where libibverbs is found,
/// else from rdma_session_unavailable.cpp, which says so; nothing else in the daemon knows
/// whether RDMA is compiled in.
#include "core/result.hpp"
#include "daemon/daemon_context.hpp"
#include "daemon/frame_channel.hpp"
#include "daemon/initiator.hpp"
#include "daemon/run_placement.hpp"

#include <atomic>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

/// GET /v1/info's RDMA part: {"available": bool, "reason"?: ..., "devices": [...]}.
nlohmann::json rdma_info();

/// Initiator: after the hello, opens this side's endpoint, exchanges endpoint descriptions
/// over the session and measures every point of run.spec. `byte_cap`: the agreed
/// max_bytes_per_point (per direction); an adaptive or duration point stops once a flow
/// has moved it. `placement`: this side's CPUs for the run (every point's runner threads are
/// pinned there) and the peer's host. Throws like execute_run.
void execute_rdma_points(daemon_context& ctx, frame_channel& ch, core::run_result& run, const event_sink& emit,
                         const std::atomic<bool>& cancel, std::uint64_t byte_cap, const run_placement& placement);

/// Responder: after hello_ok, serves the endpoint exchange and every point until bye. Its
/// own active queue pairs stop once the bytes it counts reach `byte_cap`. Throws
/// session_error (sent to the initiator by the caller). Runner threads are pinned to
/// `placement.cpus`, and every point_done says where they ran.
void serve_rdma_points(daemon_context& ctx, frame_channel& ch, const core::run_spec& spec, std::uint64_t byte_cap,
                       const run_placement& placement);

}  // namespace meshperf::daemon
