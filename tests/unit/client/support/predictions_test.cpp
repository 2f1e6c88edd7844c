#include "client/support/predictions.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace predictions_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

TEST_SUITE("predictions") {

TEST_CASE("predictions: written into a document and read back; a point without one stays without") {
    client::run_predictions preds;
    preds.points = {client::point_prediction{80e-6, 50, 75, 0.25, json{{"beta_link", "a -> b"}}}, std::nullopt};
    preds.lines = {"links: the test"};
    preds.info = {{"source", "the test"}, {"lines", preds.lines}};
    const json doc{{"points", json::array({json::object(), json::object()})}};
    const auto with = client::with_predictions(doc, preds);
    CHECK(with["points"][0]["predicted"]["busbw_gbyte_per_s"] == 75);
    CHECK(with["points"][1]["predicted"].is_null());
    CHECK(with["prediction"]["source"] == "the test");
    const auto back = client::predictions_from_json(with);
    REQUIRE(back.points.size() == 2);
    REQUIRE(back.points[0]);
    CHECK(back.points[0]->time_s == doctest::Approx(80e-6));
    CHECK(back.points[0]->model["beta_link"] == "a -> b");
    CHECK_FALSE(back.points[1]);
    CHECK(back.lines == preds.lines);
    const auto times = client::predicted_times(back);
    REQUIRE(times.size() == 2);
    CHECK(*times[0] == doctest::Approx(80e-6));
    CHECK_FALSE(times[1]);
}

TEST_CASE("predictions: none in a document without them; a malformed one is refused naming the field") {
    CHECK(client::predictions_from_json(json{{"points", json::array()}}).points.empty());
    CHECK(client::predicted_times({}).empty());
    json bad{{"prediction", json::object()}, {"points", json::array({{{"predicted", {{"time_s", "fast"}}}}})}};
    CHECK_THROWS_WITH_AS(client::predictions_from_json(bad), "collective point: predicted.time_s must be a number",
                         core::spec_error);
}

}  // TEST_SUITE

}  // namespace predictions_test
