// The NIC a point's traffic left or entered this host by: /sys/class/net/IF/statistics and
// carrier_changes (counter_sources.hpp).
#include "core/counter_sources.hpp"

namespace meshperf::core {
namespace {

std::optional<std::uint64_t> nic_bytes_sent(const counter_source& s) { return s.group("counters").delta("tx_bytes"); }

}  // namespace

counter_source_kind nic_counter_source_kind() {
    return {.key = nic_source_kind,
            .device_field = "interface",
            .part = "NIC",
            .has_port = false,
            .root = "class/net/{device}",
            .groups = {{.name = "counters", .dir = "statistics", .extra_files = {"carrier_changes"}}},
            .rank = 0,
            .bytes_sent = nic_bytes_sent};
}

}  // namespace meshperf::core
