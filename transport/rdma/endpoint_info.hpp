#pragma once
/// What one side tells the other to connect its queue pairs: travels as JSON in the peer
/// session (the RDMA code opens no socket).
#include "transport/rdma/gid.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::transport::rdma {

/// Version tag of the JSON form.
inline constexpr const char* endpoint_schema = "meshperf.rdma-endpoint/1";

/// One queue pair and the memory it exposes to the peer.
struct qp_endpoint {
    std::uint32_t qpn = 0;     ///< 24-bit QP number
    std::uint32_t psn = 0;     ///< 24-bit initial packet sequence number of this side's sends
    std::uint64_t addr = 0;    ///< virtual address of the region the peer may WRITE to / READ from
    std::uint32_t rkey = 0;    ///< remote key of that region
    std::uint64_t length = 0;  ///< bytes of that region (the largest message of the run)
};

/// One side of an RDMA connection: device, path and queue pairs.
struct endpoint_info {
    std::string device;                 ///< informational ("rxe0")
    std::uint8_t port = 1;
    std::string link_layer = "Ethernet";  ///< "Ethernet" (RoCE) or "InfiniBand"
    std::uint16_t lid = 0;              ///< InfiniBand local identifier (0 on RoCE)
    gid_bytes gid{};                    ///< this side's source GID
    int gid_index = 0;
    std::uint32_t mtu = 1024;           ///< active MTU of the port in bytes; the path uses the smaller
    std::uint32_t max_rd_atomic = 1;    ///< outstanding READs this side can initiate and serve
    std::uint32_t max_inline = 0;       ///< inline bytes granted on this side's QPs
    std::vector<qp_endpoint> qps;       ///< QP i connects to the peer's QP i
};

/// JSON form ("schema", "device", "port", "link_layer", "lid", "gid" as IPv6 text,
/// "gid_index", "mtu", "max_rd_atomic", "max_inline", "qps": [{"qpn", "psn", "addr" as
/// "0x..." hex text, "rkey", "length"}]).
nlohmann::json to_json(const endpoint_info&);
/// Parses the JSON form; unknown fields are ignored (newer peers may add some). Throws
/// core::spec_error naming the bad or missing field.
endpoint_info endpoint_info_from_json(const nlohmann::json&);

/// nlohmann ADL hooks, so `json j = info;` and `j.get<endpoint_info>()` work.
void to_json(nlohmann::json& j, const endpoint_info& info);
void from_json(const nlohmann::json& j, endpoint_info& info);

}  // namespace meshperf::transport::rdma
