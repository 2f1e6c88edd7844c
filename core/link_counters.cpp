#include "core/link_counters.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/netdev_name.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

std::optional<std::uint64_t> counter_group_delta::delta(std::string_view name) const {
    const auto it = deltas.find(std::string(name));
    if (it == deltas.end()) return std::nullopt;
    return it->second;
}

std::optional<std::uint64_t> ib_counter_maximum(std::string_view name) {
    // Widths of the PortCounters attribute (IBTA spec vol. 1, 16.1.3.5). The data and packet
    // counters are 32 bits there; the kernel shows PortCountersExtended's 64-bit ones when
    // the port has them, so a value of exactly 2^32 − 1 is read as saturated.
    struct width {
        std::string_view name;
        unsigned bits;
    };
    static constexpr width widths[] = {
        {"symbol_error", 16},          {"link_error_recovery", 8},         {"link_downed", 8},
        {"port_rcv_errors", 16},       {"port_rcv_remote_physical_errors", 16}, {"port_rcv_switch_relay_errors", 16},
        {"port_xmit_discards", 16},    {"port_xmit_constraint_errors", 8}, {"port_rcv_constraint_errors", 8},
        {"local_link_integrity_errors", 4}, {"excessive_buffer_overrun_errors", 4}, {"VL15_dropped", 16},
        {"port_xmit_data", 32},        {"port_rcv_data", 32},              {"port_xmit_packets", 32},
        {"port_rcv_packets", 32},      {"port_xmit_wait", 32},
    };
    for (const auto& w : widths)
        if (w.name == name) return (std::uint64_t{1} << w.bits) - 1;
    return std::nullopt;
}

counter_group_delta counter_delta(const counter_values& before, const counter_values& after,
                                  std::optional<std::uint64_t> (*maximum)(std::string_view)) {
    counter_group_delta d;
    for (const auto& [name, end] : after) {
        const auto start = before.find(name);
        if (start == before.end()) continue;
        if (end < start->second) {
            d.resets.push_back(name);
            continue;
        }
        d.deltas[name] = end - start->second;
        if (maximum)
            if (const auto max = maximum(name); max && end >= *max) d.saturated.push_back(name);
    }
    return d;
}

}  // namespace meshperf::core
