#include "core/transport_rules.hpp"

#include "core/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshperf::core {

// Each transport's rules, in a file of its own. A new transport adds its line here and in the
// table below.
transport_rules tcp_rules();   // core/tcp_rules.cpp
transport_rules rdma_rules();  // core/rdma_rules.cpp
transport_rules ofi_rules();   // core/ofi_rules.cpp

const std::vector<transport_rules>& transport_rule_table() {
    static const std::vector<transport_rules> table{tcp_rules(), rdma_rules(), ofi_rules()};
    return table;
}

const transport_rules& transport_rules_of(std::string_view name) {
    const auto& table = transport_rule_table();
    for (const auto& r : table)
        if (r.name == name) return r;
    std::vector<std::string_view> names;
    for (const auto& r : table) names.push_back(r.name);
    throw spec_error(fmt::format("unknown transport '{}': use one of {}", name, fmt::join(names, ", ")));
}

}  // namespace meshperf::core
