#include "core/counter_sources.hpp"

#include <stdexcept>
#include <fmt/format.h>

namespace meshperf::core {

// Each kind in a file of its own. A new source adds its line here and in the table.
counter_source_kind nic_counter_source_kind();        // core/nic_counter_source.cpp
counter_source_kind rdma_port_counter_source_kind();  // core/rdma_port_counter_source.cpp

const std::vector<counter_source_kind>& counter_source_kinds() {
    static const std::vector<counter_source_kind> kinds{nic_counter_source_kind(), rdma_port_counter_source_kind()};
    return kinds;
}

const counter_source_kind* find_counter_source_kind(std::string_view key) {
    for (const auto& k : counter_source_kinds())
        if (k.key == key) return &k;
    return nullptr;
}

counter_source empty_counter_source(std::string_view kind, std::string device, unsigned port) {
    const auto* k = find_counter_source_kind(kind);
    if (!k) throw std::out_of_range(fmt::format("no counter source kind {}", kind));
    return counter_source{std::string(kind), std::move(device), k->has_port ? port : 0u,
                          std::vector<counter_group_delta>(k->groups.size())};
}

counter_source nic_source(std::string device, counter_group_delta counters) {
    auto s = empty_counter_source(nic_source_kind, std::move(device));
    s.group("counters") = std::move(counters);
    return s;
}

counter_source rdma_port_source(std::string device, unsigned port, counter_group_delta counters,
                                counter_group_delta hw_counters) {
    auto s = empty_counter_source(rdma_port_source_kind, std::move(device), port);
    s.group("counters") = std::move(counters);
    s.group("hw_counters") = std::move(hw_counters);
    return s;
}

const counter_source* leading_source(const link_side_counters& side) {
    const counter_source* best = nullptr;
    int best_rank = 0;
    for (const auto& s : side.sources) {
        const auto* k = find_counter_source_kind(s.kind);
        const int rank = k ? k->rank : -1;
        if (!best || rank > best_rank) best = &s, best_rank = rank;
    }
    return best;
}

}  // namespace meshperf::core
