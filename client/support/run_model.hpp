#pragma once
/// The fitted latency–bandwidth model of a run as the CLI shows it: under the tables, in the
/// JSON result document ("model"), and held-out predictions (`meshperf model`).
#include "analysis/model.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace meshperf::client {

/// A run's model, or why there is none.
struct run_model {
    std::optional<analysis::model_fit> fit;
    std::string why_not;  ///< set when fit is empty: the fit's error, or "no points"
};

/// Fits the model of a run's points (never throws: a failed fit gives why_not).
run_model fit_run_model(const core::run_result& run);

/// The model block printed under a run's tables (several lines, ends with a newline).
std::string render_model_text(const run_model& m);

/// Adds the model to a result document: "model" is core::to_json(model_fit), or null with
/// "model_error" saying why there is none. Other fields are left as they are.
nlohmann::json with_model(nlohmann::json doc, const core::run_result& run);

/// Per-message time the model predicts for a point of this kind: one-way latency for a
/// latency point, size / rate for a stream (bandwidth) point, seconds.
double predicted_time_s(const analysis::model_fit& m, double size_bytes, bool stream);

}  // namespace meshperf::client
