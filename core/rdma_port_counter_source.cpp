// The RDMA port a point ran over: /sys/class/infiniband/DEV/ports/P/counters (the PMA port
// counters: symbol_error, link_downed, port_xmit_data, ...; fixed widths that saturate) and
// hw_counters (the driver's own: mlx5's out_of_sequence, np_cnp_sent, ...; rxe's sent_pkts)
// (counter_sources.hpp).
#include "core/counter_sources.hpp"

namespace meshperf::core {
namespace {

/// port_xmit_data counts 4-byte words; over RoCE the netdev's own counters may miss the
/// traffic, so this source speaks for the end's bytes, or nothing does.
std::optional<std::uint64_t> port_bytes_sent(const counter_source& s) {
    if (const auto words = s.group("counters").delta("port_xmit_data")) return *words * 4;
    return std::nullopt;
}

}  // namespace

counter_source_kind rdma_port_counter_source_kind() {
    return {.key = rdma_port_source_kind,
            .device_field = "device",
            .part = "RDMA",
            .has_port = true,
            .root = "class/infiniband/{device}/ports/{port}",
            .groups = {{.name = "counters", .dir = "counters", .maximum = ib_counter_maximum},
                       {.name = "hw_counters", .dir = "hw_counters"}},
            .rank = 1,
            .bytes_sent = port_bytes_sent};
}

}  // namespace meshperf::core
