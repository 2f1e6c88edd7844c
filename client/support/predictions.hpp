#pragma once
/// The predicted figures of a collective run, as `collective --predict` computes them
/// (client/collective/predict.hpp), the renderers print them and a result document keeps
/// them (docs/result-schema.md, "Collective results"): plain structs and their JSON.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::client {

/// One point's prediction.
struct point_prediction {
    double time_s = 0;
    double algbw_gbyte_per_s = 0;
    double busbw_gbyte_per_s = 0;
    double error = 0;                 ///< (measured − predicted) / predicted: positive when slower
    nlohmann::json model = nullptr;   ///< what it was computed from (the "model" of the JSON)
};

/// The predictions of a run, index = point (nullopt where not modelled), and the lines that
/// say where the links came from and what is not modelled.
struct run_predictions {
    std::vector<std::optional<point_prediction>> points;
    std::vector<std::string> lines;
    nlohmann::json info = nullptr;  ///< the document's "prediction": source, links, lines
};

/// Each point's predicted time (nullopt where not modelled), for render_collective_svg;
/// empty when `preds` has no points.
std::vector<std::optional<double>> predicted_times(const run_predictions& preds);

/// The "predicted" object of a point's JSON: time_s, algbw_gbyte_per_s, busbw_gbyte_per_s,
/// error, model.
nlohmann::json to_json(const point_prediction&);

/// The document with the predictions in it: each point's "predicted" (null where not
/// modelled) and the run's "prediction" (docs/result-schema.md, "Collective results").
nlohmann::json with_predictions(nlohmann::json doc, const run_predictions&);

/// The predictions a document holds (with_predictions wrote them): empty points when it has
/// none. Throws core::spec_error for a malformed "predicted" object.
run_predictions predictions_from_json(const nlohmann::json& doc);

}  // namespace meshperf::client
