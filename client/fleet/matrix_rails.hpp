#pragma once
/// --rails of a matrix: each link's rails matched from its two daemons' GET /v1/info, and a
/// link's rail readings turned into what the rail planes' verdict takes.
#include "analysis/rail_planes.hpp"
#include "client/fleet/matrix_settings.hpp"
#include "core/rail_check.hpp"
#include "core/rail_spec.hpp"

#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace meshperf::client {

/// A link's rail readings for the planes' verdict, each marked bad when one of `problems`
/// (any rule's) is about it.
std::vector<analysis::rail_observation> rail_observations(const std::vector<core::rail_reading>& readings,
                                                          const std::vector<core::rail_problem>& problems);

/// The rails of each link matched from its two daemons' GET /v1/info (read once per host,
/// by the runner's probe), with --expect's rate on each; the notes of the matching said
/// once, not once per link. Safe to use from the runner's threads.
class matrix_rails {
public:
    /// Keeps references to `o` and `names` (the hosts as given), which must outlive it.
    matrix_rails(const matrix_settings& o, const std::vector<std::string>& names)
        : o_(o), names_(names), infos_(names.size()), addresses_(names.size()) {}

    /// Keeps host h's /v1/info.
    void set_info(std::size_t h, nlohmann::json info);
    /// The rails of from → to (none without --rails). Rails that cannot be paired are the
    /// link's problem (`problems`), and the link is then measured without rails.
    std::vector<core::rail_pair> of(std::size_t from, std::size_t to, std::vector<std::string>& problems);
    /// Says `note` on stderr unless it was said before.
    void say_once(const std::string& note);

private:
    const matrix_settings& o_;
    const std::vector<std::string>& names_;
    std::mutex m_;
    std::vector<nlohmann::json> infos_;  // each daemon's GET /v1/info (null: it did not answer)
    std::vector<std::vector<std::string>> addresses_;  // each daemon's numeric addresses, as the CLI reaches it
    std::set<std::string> said_;  // the notes already said
};

}  // namespace meshperf::client
