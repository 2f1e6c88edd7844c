#pragma once
/// Handlers of GET /metrics and /v1/baselines (no I/O beyond the stores): each turns a
/// request into an api_reply, as daemon/api/api_routes.hpp's do.
#include "daemon/api/api_routes.hpp"

#include <string>

namespace meshperf::daemon {

/// GET /metrics: Prometheus text exposition (daemon/runtime/metrics.hpp).
api_reply handle_metrics(api_state&);

/// /v1/baselines?peer=HOST[:PORT][&transport=T]:
/// - GET: the stored baselines (all peers when `peer` is absent);
/// - PUT: stores figures for the peer, from {"run_id": "r-..."} (a completed run of this
///   daemon against that peer: its latency and bandwidth points) or {"figures": [{"test",
///   "size_bytes", "gbit_per_s" | "lat_us"}]}; each replaces the figure of the same test and
///   size;
/// - DELETE: removes the peer's baselines.
/// `method` is "GET", "PUT" or "DELETE" (others get 405).
api_reply handle_baselines(api_state&, const std::string& method, const std::string& query, const std::string& body);

}  // namespace meshperf::daemon
