#pragma once
/// The series of an inspection on GET /metrics (metrics_registry::record_inspection): the
/// textfile's families (node/inspect_textfile.hpp: verdict, findings per state, timestamp,
/// rail rates, PCIe links, GPU-rail pairs) and, from the daemon only:
///   meshperf_inspect_check_state{host,check}           each check's worst state (0 OK .. 3 UNKNOWN)
///   meshperf_inspect_finding_state{host,check,subject}  each finding that is not OK, at most
///                                                       max_exported_findings (worst first);
///                                                       meshperf_inspect_findings counts them all
///   meshperf_rnic_loopback_bits_per_second{host,device,port}  each measured RDMA loopback
/// Every label value comes from the node's own devices and a fixed set of checks, so the
/// series are bounded by its GPUs, NICs and bridges (tens). Builds text only.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace meshperf::daemon {

/// Findings beyond this many (not OK) are counted but get no series of their own.
inline constexpr std::size_t max_exported_findings = 32;

/// The exposition of one inspection document (node/inspect.hpp to_json) made at
/// `unix_seconds`. A document it cannot read (no "findings") still gives the textfile's
/// families with the verdict it has.
std::string inspection_exposition(const nlohmann::json& inspection, double unix_seconds);

}  // namespace meshperf::daemon
