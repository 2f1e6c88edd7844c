#pragma once
/// What every run's document starts with, a sweep's ("meshperf.run/1") and a collective's
/// ("meshperf.collective/1") alike: its id, state, times, error and warnings, and the one
/// writer of those fields (docs/result-schema.md).
#include "core/run_state.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::core {

/// The fields both kinds of run result share; core::run_result and core::collective_result
/// derive from it.
struct run_header {
    std::string id;           ///< run id: r-YYYYMMDD-HHMMSS-xxxxxx
    recorded_state state;     ///< empty only in a document read without one
    std::string created_at;   ///< RFC 3339 UTC
    std::string finished_at;  ///< RFC 3339 UTC; empty until the run ends
    std::string error;        ///< empty unless failed or cancelled
    std::vector<std::string> warnings;
};

/// Writes `schema` and the header's fields into `j`: finished_at and error are null while
/// empty, state is its text (a word read in place of a state is written back as read).
void write_run_header(nlohmann::json& j, const run_header& h, const char* schema);

}  // namespace meshperf::core
