#pragma once
/// `meshperf matrix --mode triage` over the fleet: a few shift rounds in waves of disjoint
/// links (analysis/triage_schedule), then localisation of what read bad against hosts that
/// read healthy.
#include "client/fleet/matrix_runner.hpp"
#include "client/support/topology_file.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

namespace meshperf::client {

/// What a triage ran.
struct triage_run {
    std::size_t shift_rounds = 0;
    std::size_t waves = 0;
    std::size_t localisation_rounds = 0;
    nlohmann::json rounds = nlohmann::json::array();  ///< {kind, shift, links, waves} per shift round
};

/// The shift rounds, each in waves of disjoint links; then, unless `no_retest`, the
/// localisation rounds of what read bad, against hosts that read healthy, and a recheck of
/// the partner tests that read bad and that no host or uplink explains.
triage_run run_triage(matrix_runner& m, const std::optional<topology>& topo, bool no_retest);

/// The most links of any one wave of a triage of `n` hosts (every one runs at once by default).
std::size_t widest_wave(std::size_t n, const std::optional<topology>& topo);

}  // namespace meshperf::client
