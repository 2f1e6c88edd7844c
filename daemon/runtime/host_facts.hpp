#pragma once
/// Facts about this host for results and GET /v1/info: hostname, kernel, CPU.
#include "core/result.hpp"

namespace meshperf::daemon {

/// Reads hostname (uname), kernel release, CPU model (/proc/cpuinfo) and CPU count.
/// `address` is how peers name this daemon ("host:port").
core::host_info local_host_info(const std::string& address);

/// Current UTC time in RFC 3339 with milliseconds ("2026-11-29T18:49:30.123Z").
std::string utc_now_rfc3339();

}  // namespace meshperf::daemon
