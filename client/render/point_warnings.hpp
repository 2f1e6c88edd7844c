#pragma once
/// A run's point warnings grouped: the daemon words a warning the same at every size apart
/// from its figures ("sender CPU-bound (97% of a core per stream): ..."), so warnings that
/// differ only in their numbers form one group, shown once with each varying number as a
/// range ("96–102%") and the points it applies to. The HTML report and the text table both
/// list the groups instead of repeating a warning on every row.
#include "core/result.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace meshperf::client {

/// One group of warnings.
struct warning_group {
    std::string text;    ///< the warning, varying numbers as "low–high"
    std::string where;   ///< "all 14 points", "every bandwidth point", "latency at 1 B, 8 B; bandwidth at 1 MiB"
    std::vector<const core::point_result*> points;  ///< where it was raised, in run order
};

/// The groups of a run, in order of first appearance.
struct point_warnings {
    std::vector<warning_group> groups;
    std::map<const core::point_result*, std::vector<std::size_t>> of_point;  ///< point -> its groups' indexes
};

/// Groups the warnings of `run.points`; the pointers point into `run`, which must outlive the result.
point_warnings group_point_warnings(const core::run_result& run);

}  // namespace meshperf::client
