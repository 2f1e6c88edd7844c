#pragma once
/// A whole matrix over the fleet, full or triage: its rounds, retests or localisation, and
/// the verdict of every link with what explains the bad ones. The command makes the runner
/// (and probes the hosts) before, and renders the outcome after.
#include "analysis/outliers.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/fleet/matrix_runner.hpp"
#include "client/fleet/triage_run.hpp"
#include "client/support/topology_file.hpp"

#include <cstddef>
#include <optional>

namespace meshperf::client {

/// What a matrix ran and what it found.
struct matrix_outcome {
    analysis::matrix_analysis analysis;  ///< every link's verdict, suspects applied
    std::size_t rounds = 0;              ///< full: the schedule's rounds; triage: its shift rounds
    std::size_t retest_rounds = 0;       ///< full: the retest rounds; triage: the localisation rounds
    triage_run triage;                   ///< what a triage ran (empty in a full matrix)
    std::optional<analysis::rail_fleet_verdict> rails;  ///< with --rails
    std::optional<analysis::group_verdict> groups;      ///< in triage, with a topology, or where the rails explain links
};

/// Runs the matrix on `m`'s hosts: a triage (run_triage) or every ordered pair with the bad
/// links retested once (unless `no_retest`); then the rails judged, the links they explain
/// set aside, and the bad links' causes (hosts, uplinks) judged with `topo`'s groups.
matrix_outcome run_matrix(matrix_runner& m, const std::optional<topology>& topo, bool triage, bool no_retest);

}  // namespace meshperf::client
