#pragma once
/// A run's thread placement in a few lines: for the table header, and the warnings a result
/// carries when the placement changed within the sweep or made spinning sides share a CPU.
#include "core/result.hpp"

#include <string>
#include <vector>

namespace meshperf::core {

/// Warnings about where the measuring threads ran (empty when there is nothing to say):
///  - the placement changed between points of one test kind (the latencies of the points
///    then differ by where the threads ran, not only by size);
///  - latency points whose sides spin (busy-poll, RDMA) shared a CPU on one host.
std::vector<std::string> placement_warnings(const run_result&);

/// "placement: initiator CPU 0 (NUMA 0), peer CPU 1 (NUMA 0), separate CPUs on one host":
/// one line when every test kind ran with the same placement, else one per test kind
/// ("placement (bandwidth): ..."); a kind whose points differ says so. Empty when no point
/// records its placement (results of older daemons).
std::vector<std::string> placement_lines(const run_result&);

}  // namespace meshperf::core
