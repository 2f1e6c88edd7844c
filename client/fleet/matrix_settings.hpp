#pragma once
/// What the fleet orchestrator reads of `meshperf matrix`'s options: what each link's runs
/// measure, how links are judged, how many run at once and how progress is shown. The
/// command's own options (hosts, mode, topology, output) stay in client/commands/matrix.cpp.
#include "client/support/rail_lookup.hpp"
#include "client/support/short_runs.hpp"

#include <cstddef>
#include <optional>

namespace meshperf::client {

/// The matrix's settings for a run over the fleet, as parsed from the command line.
struct matrix_settings {
    short_test_options test;         ///< what each link's short runs measure
    double bad_bw_fraction = 0.9;    ///< a link is bad below this fraction of the median bandwidth
    double bad_lat_multiple = 2.0;   ///< a link is bad above this multiple of the median latency
    double suspect_fraction = 0.5;   ///< a host is suspect when more than this share of its links is bad
    bool ignore_counters = false;    ///< --ignore-counters: links judged by their figures only
    bool quiet = false;              ///< -q, --no-progress
    bool progress = false;           ///< --progress: also when stderr is not a terminal (plain lines)
    std::size_t max_parallel = 64;   ///< pairs measured (and daemons probed) at once; without --parallel: every pair of a round
                                     ///< (triage: link of a wave) at once, within the open-file limit
    rail_options rails;              ///< --rails, --rail-map, --rails-serial: every link over these rails
    double min_rate_fraction = 0;    ///< --min-rate-fraction: each rail against this share of its link rate (0: not judged)
    std::optional<double> rail_rate_gbit;  ///< --expect's rail_rate_gbit: every rail's rate
};

}  // namespace meshperf::client
