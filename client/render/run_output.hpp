#pragma once
/// How `sweep` and `show` print a run: its table, its CSV, or the daemon's result document
/// with the fitted model added.
#include "client/support/output_format.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::client {

/// The text of `run` in `format` (table, json or csv; add_format_option offers no other):
/// render_run_table, `doc` with_model (pretty-printed, ending in a newline), or render_csv.
/// `doc` is the result document `run` was read from.
std::string render_run(output_format format, const core::run_result& run, const nlohmann::json& doc);

}  // namespace meshperf::client
