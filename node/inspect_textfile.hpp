#pragma once
/// The node_exporter textfile of an inspection (`meshperf inspect --prom-file`), made from
/// its JSON document (inspect.hpp to_json) so that the CLI writes the same file whether
/// the daemon or the CLI itself inspected. Builds text only; writing it atomically is the
/// caller's job.
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace meshperf::node {

/// Prometheus text exposition, every sample labelled with the host:
///   meshperf_inspect_state            the verdict, as its exit code (0 OK .. 3 UNKNOWN)
///   meshperf_inspect_findings{state}  findings per state
///   meshperf_inspect_timestamp_seconds  when (`unix_seconds`)
///   meshperf_rail_link_rate_bits_per_second{rail,rdma_device}  each rail's rate (absent when unknown)
///   meshperf_pcie_link_width_lanes{device,kind,bound}           bound "current" or "max"
///   meshperf_pcie_link_speed_transfers_per_second{device,kind,bound}
///   meshperf_gpu_nearest_rail_info{gpu,rail,path}                1 per GPU paired
std::string inspect_textfile(const nlohmann::json& inspection, double unix_seconds);

}  // namespace meshperf::node
