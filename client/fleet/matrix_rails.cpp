#include "client/fleet/matrix_rails.hpp"

#include "client/support/rail_lookup.hpp"
#include "client/support/rail_match.hpp"
#include "core/error.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

namespace meshperf::client {

std::vector<analysis::rail_observation> rail_observations(const std::vector<core::rail_reading>& readings,
                                                          const std::vector<core::rail_problem>& problems) {
    std::vector<analysis::rail_observation> out;
    for (const auto& r : readings) {
        const bool bad = r.failed || std::any_of(problems.begin(), problems.end(), [&](const auto& p) { return p.rail == r.name; });
        out.push_back({r.name, r.peer_name, r.gbit_per_s, r.rate_fraction, bad});
    }
    return out;
}

void matrix_rails::set_info(std::size_t h, nlohmann::json info) {
    // The addresses the CLI reaches the daemon by: a rail on one of them is the control network.
    auto addresses = o_.rails.given ? transport::numeric_addresses(transport::parse_endpoint(names_[h]).host)
                                    : std::vector<std::string>{};
    std::lock_guard lock(m_);
    infos_[h] = std::move(info);
    addresses_[h] = std::move(addresses);
}

std::vector<core::rail_pair> matrix_rails::of(std::size_t from, std::size_t to, std::vector<std::string>& problems) {
    if (!o_.rails.given) return {};
    rail_matching m;
    try {
        std::lock_guard lock(m_);
        std::vector<std::string> control_notes;
        const auto from_rails =
            without_control_rails(rails_in_info(infos_[from]), o_.rails.request, addresses_[from], names_[from], control_notes);
        const auto to_rails =
            without_control_rails(rails_in_info(infos_[to]), o_.rails.request, addresses_[to], names_[to], control_notes);
        m = match_rails(from_rails, to_rails, o_.rails.request, names_[from], names_[to]);
        m.notes.insert(m.notes.begin(), control_notes.begin(), control_notes.end());
    } catch (const core::spec_error& e) {
        problems.push_back(fmt::format("{} -> {}: the rails cannot be paired, so the link was measured without them: {}",
                                       names_[from], names_[to], e.what()));
        return {};
    }
    for (const auto& n : m.notes) say_once(n);
    if (o_.rail_rate_gbit)
        for (auto& r : m.rails) r.rate_gbit = *o_.rail_rate_gbit;
    return m.rails;
}

void matrix_rails::say_once(const std::string& note) {
    std::lock_guard lock(m_);
    if (said_.insert(note).second) std::fprintf(stderr, "matrix: %s\n", note.c_str());
}

}  // namespace meshperf::client
