#pragma once
/// One inspection of this daemon's node (node/inspect.hpp), as POST /v1/inspect and the
/// scheduled inspections (inspect_scheduler.hpp) both make it: the inventory read below
/// ctx.sysfs_root with the configuration's [rails], the checks, the manifest, and on request
/// the RNIC loopback and the all-GPU copies. Runs in the calling thread (never the I/O thread: it reads sysfs and
/// configuration space) and one at a time (ctx.inspections' lock, when there is one).
#include "daemon/runtime/context.hpp"
#include "node/inspect.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::daemon {

class run_manager;

/// What one inspection is asked to do.
struct node_inspection_request {
    std::optional<node::node_manifest> expect;  ///< compare with this manifest
    bool loopback = false;                      ///< also loop every RDMA device back to itself
    bool gpu_copies = false;                    ///< also copy host<->GPU on every GPU at once
    /// The API's listening address (as bound): its interface is not a rail (node/read_inventory.hpp).
    std::string control_address;
    std::string who = "inspect";                ///< the measurement gate's holder while measuring
    /// Set: true once whoever asked has gone (the API's client closed its connection). The
    /// inspection checks it before each stage (waiting for the one running, the inventory,
    /// the checks, the loopback and GPU copies) and stops there.
    std::function<bool()> abandoned;
};

/// The CUDA ordinals of /v1/info's "gpus" part (gpu_info(): {"inventory": {"devices":
/// [{"index", "pci_bus_id"}, ...]}}; a bare {"devices": [...]} is read too): (index, bus id)
/// pairs, nothing for what is absent or malformed.
std::vector<std::pair<int, std::string>> cuda_ordinals(const nlohmann::json& gpus);

/// The node's inventory (for /v1/info's rails too). `gpus` as for cuda_ordinals.
node::node_inventory read_node_inventory(const daemon_context&, const std::string& control_address, const nlohmann::json& gpus);

/// Inspects the node. Never throws: when sysfs's PCI devices or network interfaces cannot be
/// listed the findings are only that (check "sysfs", UNKNOWN), and any error while inspecting
/// /// is an UNKNOWN finding (check "inspect"), so the verdict is never a silent OK. The loopback
/// and the GPU copies take the measurement gate (once, for both) only when it is free and no
/// run waits in `runs` (may be null); otherwise neither is measured, an UNKNOWN finding each
/// saying why (node/loopback_check.hpp, node/gpu_copy_check.hpp), and nothing waits for
/// anything. Stopped because `req.abandoned` said so: the findings so far and an UNKNOWN
/// "inspect" finding saying the client left (was_abandoned() tells).
node::inspect_result inspect_node(daemon_context&, const node_inspection_request&, const run_manager* runs);

/// Whether `r` is an inspection inspect_node stopped because its client left.
bool was_abandoned(const node::inspect_result& r);

}  // namespace meshperf::daemon
