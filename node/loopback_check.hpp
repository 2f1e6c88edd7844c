#pragma once
/// The verdicts of `meshperf inspect --loopback` (transport/rnic_loopback.hpp), one finding
/// "rnic_loopback" per RDMA device (docs/rails.md, "RNIC loopback"):
///   OK        measured, with its Gbit/s and its share of the port rate; at or above the
///             manifest's loopback_floor_gbit when there is one
///   CRITICAL  below that floor; or the device failed (an error, corrupted data, nothing
///             completed)
///   UNKNOWN   not measured for a reason that is not the device's (the daemon was
///             measuring something else, the memlock limit), or no device to loop back
///             at all, since the check was asked for and could not be made
#include "node/inspect.hpp"
#include "transport/rnic_loopback.hpp"

#include <optional>

namespace meshperf::node {

/// Appends the findings and readings to `r` and recomputes its state.
void add_loopback_findings(inspect_result& r, const transport::rnic_loopback_survey& survey,
                           const std::optional<node_manifest>& expect);

}  // namespace meshperf::node
