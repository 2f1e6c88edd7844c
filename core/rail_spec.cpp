#include "core/rail_spec.hpp"

#include "core/error.hpp"
#include "core/netdev_name.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace meshperf::core {

using nlohmann::json;

namespace {

bool is_ip_literal(const std::string& a) {
    unsigned char buf[16];
    return ::inet_pton(AF_INET, a.c_str(), buf) == 1 || ::inet_pton(AF_INET6, a.c_str(), buf) == 1;
}

std::string rail_text(const json& v, const std::string& key) {
    if (!v.is_string()) throw spec_error(fmt::format("rails[].{} must be a string", key));
    return v.get<std::string>();
}

}  // namespace

void check_memory_domain(std::string_view field, const std::string& m) {
    if (m == "host") return;
    if (m.rfind("cuda:", 0) == 0 && m.size() > 5 && m.size() <= 8 &&
        std::all_of(m.begin() + 5, m.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return;
    throw spec_error(fmt::format("{} '{}' is not a memory domain: use host or cuda:N (N a GPU index)", field, m));
}

void validate_rails(const std::vector<rail_pair>& rails) {
    if (rails.size() > max_rails)
        throw spec_error(fmt::format("{} rails in one run: at most {} (select fewer with --rails NAME,...)", rails.size(), max_rails));
    std::set<std::string> names, locals, peers;
    for (std::size_t i = 0; i < rails.size(); ++i) {
        const auto& r = rails[i];
        if (!valid_netdev_name(r.name) || !valid_netdev_name(r.peer_name))
            throw spec_error(fmt::format("rail {}: its names must be interface names as Linux allows them (1 to 15 bytes, no "
                                         "'/', ':' or white space, not . or ..)",
                                         i));
        if (!is_ip_literal(r.local_address) || !is_ip_literal(r.peer_address))
            throw spec_error(fmt::format("rail {}: local_address '{}' and peer_address '{}' must be IP addresses (the CLI "
                                         "takes them from both daemons' GET /v1/info)",
                                         r.name, r.local_address, r.peer_address));
        if (r.rate_gbit && (!std::isfinite(*r.rate_gbit) || *r.rate_gbit <= 0))
            throw spec_error(fmt::format("rail {}: rate_gbit must be a positive number", r.name));
        if (!r.local_memory.empty()) check_memory_domain(fmt::format("rail {}'s local_memory", r.name), r.local_memory);
        if (!r.peer_memory.empty()) check_memory_domain(fmt::format("rail {}'s peer_memory", r.name), r.peer_memory);
        if (!names.insert(r.name).second) throw spec_error(fmt::format("rail {} is named twice: give each rail once", r.name));
        if (!locals.insert(r.local_address).second)
            throw spec_error(fmt::format("rails share the initiator's address {}: each rail needs its own", r.local_address));
        if (!peers.insert(r.peer_address).second)
            throw spec_error(fmt::format("rails share the peer's address {}: each rail needs its own", r.peer_address));
    }
}

json to_json(const rail_pair& r) {
    json j = {{"name", r.name}, {"peer_name", r.peer_name}, {"local_address", r.local_address}, {"peer_address", r.peer_address}};
    j["rate_gbit"] = r.rate_gbit ? json(*r.rate_gbit) : json(nullptr);
    // Only when set (cuda:auto): a daemon older than per-rail memory refuses unknown fields.
    if (!r.local_memory.empty()) j["local_memory"] = r.local_memory;
    if (!r.peer_memory.empty()) j["peer_memory"] = r.peer_memory;
    return j;
}

rail_pair rail_pair_from_json(const json& j) {
    if (!j.is_object()) throw spec_error("each entry of 'rails' must be an object {\"name\", \"peer_name\", \"local_address\", "
                                         "\"peer_address\", \"rate_gbit\", \"local_memory\"?, \"peer_memory\"?}");
    rail_pair r;
    for (const auto& [key, v] : j.items()) {
        if (key == "name") r.name = rail_text(v, key);
        else if (key == "peer_name") r.peer_name = rail_text(v, key);
        else if (key == "local_address") r.local_address = rail_text(v, key);
        else if (key == "peer_address") r.peer_address = rail_text(v, key);
        else if (key == "local_memory") r.local_memory = rail_text(v, key);
        else if (key == "peer_memory") r.peer_memory = rail_text(v, key);
        else if (key == "rate_gbit") {
            if (v.is_null()) continue;
            if (!v.is_number()) throw spec_error("rails[].rate_gbit must be a number or null");
            r.rate_gbit = v.get<double>();
        } else
            throw spec_error(fmt::format("unknown field '{}' in rails[]", key));
    }
    return r;
}

std::string with_stream_rail(const std::string& error, const std::vector<rail_pair>& rails, std::uint32_t streams_per_rail,
                             std::size_t index_in_role) {
    const auto r = rail_of_stream(index_in_role, streams_per_rail);
    if (r >= rails.size()) return error;
    const auto& rail = rails[r];
    return fmt::format("{} (stream {} on rail {}, {} -> {}, peer's {})", error, index_in_role, rail.name, rail.local_address,
                       rail.peer_address, rail.peer_name);
}

}  // namespace meshperf::core
