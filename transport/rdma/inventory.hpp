#pragma once
/// What RDMA hardware this node has, for GET /v1/info and `meshperf info`.
#include <nlohmann/json.hpp>

namespace meshperf::transport::rdma {

/// Lists RDMA devices, their ports and GIDs. Never throws.
///
/// Returns {"devices": [...]} and, when the list is empty, "reason" (e.g. "no RDMA device
/// found (ibv_get_device_list: Function not implemented: the kernel has no RDMA support)").
/// Each device: name, node_guid, fw_ver, vendor_id, vendor_part_id, max_qp, max_mr_size,
/// ports[]; each port: port, state, link_layer, active_mtu / max_mtu (bytes), lid,
/// rate_gbit_per_s (signalling rate), rate (the kernel's text, when readable), gids[]; each
/// GID: index, gid, type ("IB", "RoCE v1", "RoCE v2"), netdev, ipv4 (IPv4-mapped only).
/// A device or port that cannot be queried carries "error" instead of the details.
nlohmann::json list_devices() noexcept;

}  // namespace meshperf::transport::rdma
