#pragma once
/// What explains a matrix's bad links beyond each link's own figures: the hosts and their
/// groups' uplinks (analysis/triage_verdict), and the rails (analysis/rail_planes).
#include "analysis/outliers.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/support/topology_file.hpp"

#include <optional>
#include <vector>

namespace meshperf::client {

/// The cause of each bad link of `a`: its host or, with a topology `t`, its groups' uplink;
/// the links `aside` names (links_the_rails_explain) keep the cause it gives them.
analysis::group_verdict judge_matrix_groups(const analysis::matrix_analysis& a, const std::optional<topology>& t,
                                            const std::vector<analysis::link_cause>& aside = {});

/// The links of `a` the rails explain (rail_planes rule 4), with their cause: bad for rails
/// alone, every bad rail on a slow plane or across a slow rail uplink. Empty when there are none.
std::vector<analysis::link_cause> links_the_rails_explain(const analysis::matrix_analysis& a,
                                                          const analysis::rail_fleet_verdict& r);

}  // namespace meshperf::client
