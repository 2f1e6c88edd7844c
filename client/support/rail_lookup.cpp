#include "client/support/rail_lookup.hpp"

#include "core/error.hpp"
#include "transport/socket.hpp"

#include <cstdio>
#include <fmt/format.h>

namespace meshperf::client {

void add_rail_options(CLI::App& cmd, rail_options& o) {
    cmd.add_option("--rails", o.request.rails,
                   "measure these rails of the initiator at once: all, or NAME,... (GET /v1/info lists them; docs/rails.md)");
    cmd.add_option("--rail-map", o.request.rail_map,
                   "pair rails by hand: INITIATOR_RAIL=PEER_RAIL,... (default: by subnet, then by name)");
    cmd.add_flag("--rails-serial", o.serial, "measure the rails one after the other (one run each) instead of at once");
}

void finish_rail_options(const CLI::App& cmd, rail_options& o) {
    o.given = cmd.count("--rails") > 0;
    if (o.given) return;
    if (cmd.count("--rail-map")) throw client_error(exit_usage, "--rail-map pairs rails: give --rails all (or rail names) with it");
    if (o.serial) throw client_error(exit_usage, "--rails-serial measures rails one by one: give --rails all (or rail names) with it");
}

nlohmann::json rails_in_info(const nlohmann::json& info) {
    const auto it = info.is_object() ? info.find("rails") : info.end();
    return it == info.end() ? nlohmann::json() : *it;
}

std::vector<core::run_spec> specs_with_rails(const std::vector<core::run_spec>& specs, const std::vector<core::rail_pair>& rails,
                                             bool serial) {
    if (rails.empty()) return specs;
    std::vector<core::run_spec> out;
    for (const auto& s : specs) {
        if (serial) {
            for (const auto& r : rails) {
                out.push_back(s);
                out.back().rails = {r};
            }
        } else {
            out.push_back(s);
            out.back().rails = rails;
        }
    }
    for (const auto& s : out) core::validate(s);
    return out;
}

std::vector<core::rail_pair> look_up_rails(const daemon_client& initiator, const std::string& peer_address,
                                           const credentials& creds, const rail_options& o, nearest_gpu_request gpus) {
    const auto initiator_info = initiator.get("/v1/info");
    const daemon_client peer(peer_address, creds);
    const auto peer_info = peer.get("/v1/info");
    const auto initiator_name = "initiator " + initiator.address().to_string(), peer_name = "peer " + peer.address().to_string();
    rail_matching m;
    std::vector<std::string> pairing;
    try {
        std::vector<std::string> control_notes;
        const auto initiator_rails = without_control_rails(rails_in_info(initiator_info), o.request,
                                                           transport::numeric_addresses(initiator.address().host),
                                                           initiator_name, control_notes);
        const auto peer_rails = without_control_rails(rails_in_info(peer_info), o.request,
                                                      transport::numeric_addresses(peer.address().host), peer_name, control_notes);
        m = match_rails(initiator_rails, peer_rails, o.request, initiator_name, peer_name);
        m.notes.insert(m.notes.begin(), control_notes.begin(), control_notes.end());
        pairing = assign_nearest_gpus(m.rails, rails_in_info(initiator_info), rails_in_info(peer_info), gpus, initiator_name, peer_name);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
    for (const auto& n : m.notes) std::fprintf(stderr, "meshperf: %s\n", n.c_str());
    for (const auto& p : pairing) std::fprintf(stderr, "meshperf: cuda:auto: %s\n", p.c_str());
    return m.rails;
}

}  // namespace meshperf::client
