#pragma once
/// --rails for the commands that take it (sweep, check): the options, and the rails of a
/// run from both daemons' GET /v1/info matched by client/support/rail_match.hpp.
#include "client/support/daemon_client.hpp"
#include "client/support/rail_match.hpp"
#include "client/support/rail_memory.hpp"
#include "core/run_spec.hpp"

#include <CLI/CLI.hpp>

namespace meshperf::client {

/// --rails, --rail-map and --rails-serial as given.
struct rail_options {
    rail_request request;
    bool given = false;   ///< --rails was on the command line
    bool serial = false;  ///< --rails-serial: one rail after the other, one run each
};

/// Registers --rails, --rail-map and --rails-serial on `cmd`, parsed into `o`.
void add_rail_options(CLI::App& cmd, rail_options& o);

/// After parsing: records whether --rails was given; --rail-map or --rails-serial without
/// it is a usage error (client_error, exit 2).
void finish_rail_options(const CLI::App& cmd, rail_options& o);

/// The "rails" array of a daemon's GET /v1/info document (null when it has none: an older
/// meshperfd), as match_rails takes it.
nlohmann::json rails_in_info(const nlohmann::json& info);

/// The specs with the rails added (all of them in each, or one rail per spec with
/// `serial`), each checked again (core::validate). Without rails, the specs as they are.
std::vector<core::run_spec> specs_with_rails(const std::vector<core::run_spec>& specs, const std::vector<core::rail_pair>& rails,
                                             bool serial);

/// Fetches GET /v1/info from the initiator and from the peer (`peer_address`, as the run
/// names it) and matches their rails; with `gpus` (--memory cuda:auto) puts each rail's
/// memory at the asked ends on its nearest GPU (assign_nearest_gpus). The notes and the
/// GPU pairing go to stderr. A daemon that cannot be reached is client_error exit 3; rails
/// that do not match, or a rail without a usable GPU near it, exit 2.
std::vector<core::rail_pair> look_up_rails(const daemon_client& initiator, const std::string& peer_address,
                                           const credentials& creds, const rail_options& o, nearest_gpu_request gpus = {});

}  // namespace meshperf::client
