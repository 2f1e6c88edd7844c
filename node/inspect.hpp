#pragma once
/// `meshperf inspect`: the node's own health before a job, judged from its inventory.
/// Each check gives a finding with a Nagios state; the verdict is the worst
/// (CRITICAL > WARNING > UNKNOWN > OK, core/check.hpp). The checks and their thresholds
/// (docs/rails.md says where each comes from):
///   pcie_link  a GPU's or NIC's link with fewer lanes than both of its ends can do (its
///              max and the port above's, pcie_path_links.hpp): CRITICAL; a NIC's link
///              slower than both ends can: CRITICAL; a GPU's slower: WARNING (GPUs lower
///              their link speed when idle, so only under load is it a fault); trained at
///              what the weaker end can do: OK; a value the kernel does not give:
///              UNKNOWN; no link attributes at all (not a PCIe function: a virtio NIC):
///              OK, nothing to check. Each switch uplink on a GPU's or rail NIC's path
///              (subject "bridge" and its upstream port), once: narrower or slower than
///              both ends can do: CRITICAL, naming the GPUs and rails behind it;
///              unreadable: UNKNOWN; a bridge without link attributes: not checked.
///   acs        a bridge between a GPU and its nearest rail with an ACS redirect bit set:
///              WARNING; configuration space unreadable (not root) or short: UNKNOWN.
///   affinity   a GPU whose nearest rail is PHB, NODE or SYS (through the CPU): WARNING;
///              GPUs but no rail with a PCIe position: UNKNOWN.
///   rail_link  a rail whose link is down: CRITICAL.
///   rails      no rail at all: WARNING.
///   manifest   each difference from --expect: CRITICAL (counts, rate, MTU) or WARNING
///              (NIC firmware, NIC driver and its module version, GPU driver version);
///              unreadable versions, and nic_driver on a driver without a module version
///              (in-tree): UNKNOWN.
///   rnic_loopback  (--loopback; node/loopback_check.hpp) each RDMA device writing to
///              itself: below the manifest's loopback_floor_gbit or failed: CRITICAL; not
///              measured (busy daemon, memlock limit, no device): UNKNOWN.
///   gpu_copy   (--gpu-copies; node/gpu_copy_check.hpp) host<->GPU copies on every GPU at
///              once: below the manifest's h2d/d2h floor, corrupted or failed: CRITICAL; not
///              measured (no CUDA, busy daemon): UNKNOWN.
#include "core/check.hpp"
#include "node/copy_floors.hpp"
#include "node/inventory.hpp"
#include "node/manifest.hpp"
#include "transport/rnic_loopback.hpp"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::node {

/// One check on one subject.
struct finding {
    core::check_state state = core::check_state::ok;
    std::string check;    ///< "pcie_link", "acs", "affinity", "rail_link", "rails", "manifest"
    std::string subject;  ///< "GPU 0000:19:00.0", "rail enp24s0np0", "bridge 0000:18:00.0"
    std::string message;  ///< what was found, one sentence
};

/// The inspection of one node.
struct inspect_result {
    std::string host;              ///< whose node it is
    node_inventory inventory;
    std::vector<finding> findings; ///< every check made, OK ones included
    core::check_state state = core::check_state::ok;
    /// --loopback: each RDMA device's loopback (empty when not asked or none measured).
    std::vector<transport::rnic_loopback_reading> loopback;
    /// --gpu-copies: each GPU's h2d and d2h figure with every GPU copying (empty when not asked
    /// or none measured).
    std::vector<gpu_copy_figure> gpu_copies;
};

/// Runs every check on `inv` (reading bridges' configuration space below inv.sysfs_root)
/// and, when given, compares it with `expect`.
inspect_result inspect(node_inventory inv, const std::optional<node_manifest>& expect, std::string host);

/// The manifest comparison alone: one finding per key given.
std::vector<finding> compare_manifest(const node_inventory&, const node_manifest&);

/// {"host", "state", "exit_code", "summary", "findings": [...], "node": to_json(inventory),
///  "perfdata": "..."}.
nlohmann::json to_json(const inspect_result&);

/// The Nagios first line: "MESHPERF INSPECT WARNING - node1: 8 GPUs, 8 rails; 1 warning:
/// bridge 0000:18:00.0: ... | gpus=8;;;0; rails=8;;;0;" (shorter than 300 characters).
std::string verdict_line(const inspect_result&);

/// The performance data, one item per rail (rate) and per PCIe link of a GPU, a rail NIC
/// or a switch uplink (lanes, against what both ends of the link can do).
std::vector<std::string> perfdata(const inspect_result&);

/// The whole text: the verdict line, each finding that is not OK, a table of the GPUs and
/// the rails, and the perfdata on the lines after "|" (the Nagios long-output form).
std::string render_text(const inspect_result&, bool with_table);

}  // namespace meshperf::node
