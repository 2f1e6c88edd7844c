#pragma once
/// Matches the rails of two daemons (their GET /v1/info "rails") into the rail pairs of a
/// run: by --rail-map first, then by subnet, then by name (docs/rails.md). Pure: the
/// caller fetches both lists.
#include "core/rail_spec.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::client {

/// What the user asked for: --rails and --rail-map as given.
struct rail_request {
    std::string rails = "all";  ///< "all" or the initiator's rail names, comma separated
    std::string rail_map;       ///< "a0=b0,a1=b1": initiator rail = peer rail; empty: none
};

/// The matched rails, and what the user should know (a rail whose link is down, a rail
/// matched by name across subnets).
struct rail_matching {
    std::vector<core::rail_pair> rails;
    std::vector<std::string> notes;
};

/// With --rails all, leaves out of a /v1/info "rails" array the rails that carry the control
/// connection: a rail with one of `daemon_addresses` (the daemon's address as the CLI reaches
/// it) is the management network seen through a daemon that listens on every address, not a
/// rail (docs/rails.md). Each one left out is said in `notes`, naming `whose` ("initiator
/// A"); named rails (--rails a,b) are kept as asked. Returns the array without them.
nlohmann::json without_control_rails(const nlohmann::json& rails, const rail_request& request,
                                     const std::vector<std::string>& daemon_addresses, const std::string& whose,
                                     std::vector<std::string>& notes);

/// Matches `initiator_rails` with `peer_rails` (each a /v1/info "rails" array; the names
/// say whose they are in messages). Throws core::spec_error, naming the rail and what
/// exists, for: a rail name neither side has, a map pairing one rail twice, a selected
/// rail without a partner, with "all" a rail of either side left without one, a rail
/// without an IP address, one side without rails.
rail_matching match_rails(const nlohmann::json& initiator_rails, const nlohmann::json& peer_rails, const rail_request&,
                          const std::string& initiator_name, const std::string& peer_name);

}  // namespace meshperf::client
