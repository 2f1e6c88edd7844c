#include "daemon/transports/tcp/tcp_rail_failures.hpp"

#include "core/sizes.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon::tcp_rails {

using nlohmann::json;

std::size_t index_in_role(const std::vector<tcp::stream_role>& roles, std::size_t i) {
    return static_cast<std::size_t>(std::count(roles.begin(), roles.begin() + static_cast<std::ptrdiff_t>(i), roles[i]));
}

std::string stream_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles) {
    if (!side) return {};
    const auto failed = side->failed_stream();
    if (!failed || spec.rails.empty() || *failed >= roles.size()) return side->error();
    return core::with_stream_rail(side->error(), spec.rails, spec.streams, index_in_role(roles, *failed));
}

std::vector<core::rail_failure> side_rail_failures(const tcp::point_side& side, const core::run_spec& spec,
                                                   const std::vector<tcp::stream_role>& roles, const std::string& where) {
    std::vector<core::rail_failure> out;
    if (spec.rails.empty()) return out;
    for (const auto i : side.failed_streams()) {
        if (i >= roles.size()) continue;
        const auto in_role = index_in_role(roles, i);
        const auto rail = core::rail_of_stream(in_role, spec.streams);
        if (rail >= spec.rails.size()) continue;
        const auto what = core::with_stream_rail(side.stream_error(i), spec.rails, spec.streams, in_role);
        core::merge_rail_failures(out, {{spec.rails[rail].name, fmt::format("data stream failed {}: {}", where, what)}});
    }
    return out;
}

std::string side_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles,
                       bool tolerant) {
    if (!side || side->failed_streams().empty()) return {};
    const auto failed = side->failed_streams();
    const bool all_on_rails = std::all_of(failed.begin(), failed.end(), [&](std::size_t i) {
        return i < roles.size() && core::rail_of_stream(index_in_role(roles, i), spec.streams) < spec.rails.size();
    });
    if (tolerant && all_on_rails && core::rails_survive(spec.rails, side_rail_failures(*side, spec, roles, "")))
        return {};
    return stream_error(side, spec, roles);
}

std::vector<core::rail_failure> point_rail_failures(const tcp::point_side& side, const json& peer_done,
                                                    const core::run_spec& spec, const std::vector<tcp::stream_role>& roles) {
    auto failed = side_rail_failures(side, spec, roles, "at the initiator");
    core::merge_rail_failures(failed, point_rails::peer_rail_failures(peer_done, spec));
    return point_rails::with_a_survivor(std::move(failed), spec);
}

}  // namespace meshperf::daemon::tcp_rails
