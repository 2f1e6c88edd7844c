#pragma once
/// `check --rails`: each rail of a run over rails judged against a fraction of its link
/// rate, as ngc_multinode_perf passes a rail at 90% of its port rate (docs/rails.md).
#include "core/check.hpp"
#include "core/result.hpp"

#include <vector>

namespace meshperf::core {

/// One verdict per rail of every bandwidth and bidir point of `run` that has rails:
/// CRITICAL below min_rate_fraction × the rail's rate (× 2 for bidir: the rate is per
/// direction) or when the rail moved nothing; UNKNOWN when its rate is unknown. The
/// figures carry the rail's name. Throws spec_error unless 0 < min_rate_fraction <= 1.
std::vector<figure_verdict> rail_verdicts(const run_result& run, double min_rate_fraction);

/// Adds rail verdicts to a result that has figures: its state becomes the worst of all. A
/// result without figures (UNKNOWN, the check not made) is left as it is.
void add_rail_verdicts(check_result&, std::vector<figure_verdict>);

}  // namespace meshperf::core
