#pragma once
/// The per-rail rows of a run over rails (spec.rails): each rail's Gbit/s at every size of
/// a bandwidth or bidir test, its link rate and the share of it, and the rails' aggregate.
#include "core/result.hpp"

#include <string>
#include <vector>

namespace meshperf::client {

/// The per-rail table of `test`: a heading line and its rows (header row first), for
/// format_table; no rows when no point of it has rails.
struct rail_rows {
    std::string heading;
    std::vector<std::vector<std::string>> rows;
};
rail_rows rail_table_rows(const core::run_result& run, core::test_kind test);

}  // namespace meshperf::client
