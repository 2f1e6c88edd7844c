#include "client/support/predictions.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

std::vector<std::optional<double>> predicted_times(const run_predictions& preds) {
    std::vector<std::optional<double>> out;
    for (const auto& p : preds.points) out.push_back(p ? std::optional<double>(p->time_s) : std::nullopt);
    return out;
}

json to_json(const point_prediction& p) {
    return {{"time_s", p.time_s},
            {"algbw_gbyte_per_s", p.algbw_gbyte_per_s},
            {"busbw_gbyte_per_s", p.busbw_gbyte_per_s},
            {"error", p.error},
            {"model", p.model}};
}

json with_predictions(json doc, const run_predictions& preds) {
    auto& points = doc["points"];
    for (std::size_t i = 0; i < points.size() && i < preds.points.size(); ++i)
        points[i]["predicted"] = preds.points[i] ? to_json(*preds.points[i]) : json(nullptr);
    doc["prediction"] = preds.info;
    return doc;
}

run_predictions predictions_from_json(const json& doc) {
    run_predictions out;
    if (!doc.is_object() || !doc.contains("prediction") || doc["prediction"].is_null()) return out;
    out.info = doc["prediction"];
    for (const auto& l : out.info.value("lines", json::array()))
        if (l.is_string()) out.lines.push_back(l.get<std::string>());
    for (const auto& p : doc.value("points", json::array())) {
        const auto it = p.find("predicted");
        if (it == p.end() || it->is_null()) {
            out.points.emplace_back();
            continue;
        }
        const auto number = [&](const char* key) {
            if (!it->contains(key) || !(*it)[key].is_number())
                throw core::spec_error(fmt::format("collective point: predicted.{} must be a number", key));
            return (*it)[key].get<double>();
        };
        out.points.push_back(point_prediction{number("time_s"), number("algbw_gbyte_per_s"), number("busbw_gbyte_per_s"),
                                              number("error"), it->value("model", json(nullptr))});
    }
    return out;
}

}  // namespace meshperf::client
