#pragma once
/// How `collective` and `show` print a collective run (schema meshperf.collective/1): a
/// table per op in nccl-tests' column order (size, count, type, redop, time, algbw, busbw,
/// #wrong), then what nccl-tests does not show (the spread over ranks, the slowest rank,
/// the slowest ring link; incast's total, fairness and per-sender goodput) and, with
/// predictions, the predicted time and the relative error; the document as JSON; or CSV.
#include "client/support/predictions.hpp"
#include "client/support/output_format.hpp"
#include "core/collective/result.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::client {

/// The run as text: a header (id, state, ranks and their daemons), per op a header line (op,
/// algorithm, p ranks, transport, memory) and its table, the prediction's lines, then the
/// run's warnings and error. `preds.points` empty: no prediction columns.
std::string render_collective_table(const core::collective_result& run, const run_predictions& preds = {});

/// core::collective_csv_header() and one core::to_csv_row per point; with predictions
/// (`preds.points` not empty: `collective --predict`, or `show` of a document that holds
/// them) three more columns, predicted_time_us, predicted_busbw_gbyte_per_s (GB/s, as
/// busbw_gbyte_per_s) and prediction_error ((measured − predicted) / predicted), empty for a
/// point that is not modelled.
std::string render_collective_csv(const core::collective_result& run, const run_predictions& preds = {});

/// The text of the run in `format` (table, json or csv): the table, `doc` pretty-printed
/// (with its predictions, ending in a newline), or the CSV. `doc` is the document `run` was
/// read from.
std::string render_collective(output_format format, const core::collective_result& run, const nlohmann::json& doc,
                              const run_predictions& preds = {});

/// The progress line of point `index` (1-based) of `total` as it arrives:
/// "[ 3/12] allreduce ring  16 MiB  1234 µs  busbw 12.3 GB/s".
std::string collective_progress_line(const core::collective_point& p, std::size_t index, std::size_t total);

}  // namespace meshperf::client
