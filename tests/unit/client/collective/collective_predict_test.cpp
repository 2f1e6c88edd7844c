// client/collective/predict and client/collective/links: the α–β prediction next to a
// measured collective (the worst α and the worst β over the ring's links, each named), the
// relative error (measured − predicted) / predicted, what is not modelled, the JSON it adds
// to the document and reads back, and the ring links of a matrix.
#include "client/collective/links.hpp"
#include "client/collective/predict.hpp"
#include "core/collective/plan.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace collective_predict_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using doctest::Approx;
using nlohmann::json;

namespace {

using series = std::vector<std::vector<double>>;

series same(unsigned ranks, std::size_t iterations, double seconds) {
    return series(ranks, std::vector<double>(iterations, seconds));
}

/// Ring all-reduce over 4 ranks of 4 MB: 100 µs an iteration.
core::collective_point allreduce_4() {
    return core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 4, core::dtype::fp32,
                                           4'000'000, same(4, 5, 100e-6), same(4, 5, 80e-6), {});
}

core::collective_point incast_4() {
    return core::assemble_collective_point(core::collective_op::incast, core::collective_algo::direct, 4, core::dtype::fp32,
                                           1'000'000, same(4, 3, 1e-3), {}, {});
}

/// Four ring links: the worst α (3 µs) on n1 -> n2, the worst β (600 Gbit/s) on n0 -> n1.
client::prediction_links four_links() {
    using analysis::link_model;
    return {"the test",
            {{"n0", "n1", link_model::from_us_gbit(1, 600)},
             {"n1", "n2", link_model::from_us_gbit(3, 1200)},
             {"n2", "n3", link_model::from_us_gbit(2, 800)},
             {"n3", "n0", link_model::from_us_gbit(0.5, 1000)}}};
}

}  // namespace

TEST_CASE("relative error: (measured - predicted) / predicted, positive when slower than predicted") {
    CHECK(client::relative_error(110e-6, 100e-6) == Approx(0.1));
    CHECK(client::relative_error(90e-6, 100e-6) == Approx(-0.1));
    CHECK(client::relative_error(1, 1) == 0);
    CHECK_THROWS_AS(client::relative_error(1, 0), core::insane_figure);
    CHECK_THROWS_AS(client::relative_error(std::nan(""), 1), core::insane_figure);
}

TEST_CASE("prediction: ring all-reduce from the worst α and the worst β over the ring's links") {
    const auto pred = client::predict_point(allreduce_4(), four_links());
    REQUIRE(pred);
    // 2(p−1) steps of α = 3 µs, and 2(p−1)/p · S / β = 1.5 · 4 MB / 75 GB/s = 80 µs: 98 µs.
    CHECK(pred->time_s == Approx(98e-6));
    CHECK(pred->algbw_gbyte_per_s == Approx(4e6 / 98e-6 / 1e9));
    CHECK(pred->busbw_gbyte_per_s == Approx(1.5 * 4e6 / 98e-6 / 1e9));
    CHECK(pred->error == Approx((100e-6 - 98e-6) / 98e-6));
    CHECK(pred->model["alpha_link"] == "n1 -> n2");
    CHECK(pred->model["beta_link"] == "n0 -> n1");
    CHECK(pred->model["alpha_us"].get<double>() == Approx(3));
    CHECK(pred->model["beta_gbit_per_s"].get<double>() == Approx(600));
    CHECK(pred->model["collective"] == "all_reduce");
    CHECK(pred->model["algorithm"] == "ring");
    CHECK(pred->model["caveat"].is_null());
}

TEST_CASE("prediction: incast and tree broadcast, which plan has no formula for, walk their own schedule") {
    CHECK_FALSE(client::modelled_as(core::collective_op::incast, core::collective_algo::direct));
    CHECK_FALSE(client::modelled_as(core::collective_op::broadcast, core::collective_algo::tree));
    const auto pred = client::predict_point(incast_4(), four_links());
    REQUIRE(pred);
    // Three senders of 1 MB into rank 0 over the worst link: 3 µs + 3 MB / 75 GB/s = 43 µs.
    CHECK(pred->time_s == Approx(43e-6));
    CHECK(pred->error == Approx((1e-3 - 43e-6) / 43e-6));
    CHECK(pred->busbw_gbyte_per_s == Approx(3 * 1e6 / 43e-6 / 1e9));
    CHECK(pred->model["collective"] == "incast");
    CHECK(pred->model["schedule"]["steps"] == 1);
    CHECK(pred->model["step_message_bytes"].get<double>() == Approx(1e6));
    CHECK(pred->model["caveat"].get<std::string>().find("schedule") != std::string::npos);
}

TEST_CASE("prediction: the chain broadcast walks its pipeline; plan's time, without the fill, is kept beside it") {
    REQUIRE(client::modelled_as(core::collective_op::broadcast, core::collective_algo::ring));
    // 4 ranks, 8 pieces of 512 KiB over the worst link (α 3 µs, β 75 GB/s): 8 + 4 − 2 = 10
    // pieces' time, 3 hops' α.
    const std::uint64_t piece = core::pipeline_piece_bytes, size = 8 * piece;
    const auto point = core::assemble_collective_point(core::collective_op::broadcast, core::collective_algo::ring, 4,
                                                       core::dtype::fp32, size, same(4, 3, 1e-3), {}, {});
    const auto pred = client::predict_point(point, four_links());
    REQUIRE(pred);
    CHECK(pred->time_s == Approx(10 * double(piece) / 75e9 + 3 * 3e-6));
    CHECK(pred->model["schedule"]["steps"] == 10);
    CHECK(pred->model["links"] == "ring's worst");
    // plan: (p − 1)α + S/β, the pipeline's fill left out.
    CHECK(pred->model["plan_time_s"].get<double>() == Approx(3 * 3e-6 + double(size) / 75e9));
    CHECK(pred->model["plan_time_s"].get<double>() < pred->time_s);
    CHECK(pred->model["caveat"].get<std::string>().find("fill") != std::string::npos);
    // Only plan's own formulas carry no plan_time_s of their own.
    CHECK_FALSE(client::predict_point(allreduce_4(), four_links())->model.contains("plan_time_s"));
    CHECK_FALSE(client::predict_point(incast_4(), four_links())->model.contains("plan_time_s"));
}

TEST_CASE("prediction: from a matrix, incast walks each sender's own link") {
    using analysis::link_model;
    auto links = four_links();
    // Every pair at 1 µs and 800 Gbit/s (100 GB/s), but n3 -> n0 at 80 Gbit/s (10 GB/s).
    for (const char* from : {"n0", "n1", "n2", "n3"})
        for (const char* to : {"n0", "n1", "n2", "n3"})
            if (std::string(from) != to)
                links.pairs.push_back({from, to, link_model::from_us_gbit(1, std::string(from) == "n3" && std::string(to) == "n0" ? 80 : 800)});
    const auto pred = client::predict_point(incast_4(), links);
    REQUIRE(pred);
    // n3's 1 MB at 10 GB/s = 100 µs decides (the others' 2 MB come in beside it), plus α = 1 µs.
    CHECK(pred->time_s == Approx(101e-6));
    CHECK(pred->model["links"] == "own");
    CHECK(pred->model["beta_link"] == "n3 -> n0");
    CHECK(pred->model["beta_gbit_per_s"].get<double>() == Approx(80));
    CHECK(pred->model["caveat"].get<std::string>().find("each message over its own link") != std::string::npos);
    // A pair the schedule needs is missing: the ring's worst link instead, as without pairs.
    links.pairs.erase(std::remove_if(links.pairs.begin(), links.pairs.end(),
                                     [](const auto& p) { return p.from == "n2" && p.to == "n0"; }),
                      links.pairs.end());
    const auto fallback = client::predict_point(incast_4(), links);
    REQUIRE(fallback);
    CHECK(fallback->time_s == Approx(43e-6));
    CHECK(fallback->model["links"] == "ring's worst");
}

TEST_CASE("prediction: the all-to-all model and its caveat") {
    const auto alltoall = client::modelled_as(core::collective_op::alltoall, core::collective_algo::direct);
    REQUIRE(alltoall);
    CHECK(alltoall->coll == core::collective_op::alltoall);
    CHECK(alltoall->algo == core::model_algo::pairwise);
    CHECK_FALSE(alltoall->caveat.empty());
}

TEST_CASE("prediction: the document gains each point's \"predicted\" and reads them back") {
    core::collective_result run;
    run.id = "c-1";
    run.state = core::run_state::completed;
    run.spec.hosts = {"n0", "n1", "n2", "n3"};
    run.spec.ops = {core::collective_op::allreduce, core::collective_op::incast};
    run.spec.sizes = {1'000'000, 4'000'000};
    run.points = {allreduce_4(), incast_4()};
    const auto preds = client::predict_run(run, four_links());
    REQUIRE(preds.points.size() == 2);
    CHECK(preds.points[0]);
    CHECK(preds.points[1]);
    bool said_incast = false;
    for (const auto& l : preds.lines) said_incast |= l.rfind("incast direct: modelled by walking the measured schedule", 0) == 0;
    CHECK(said_incast);

    const auto doc = client::with_predictions(core::to_json(run), preds);
    const auto& p0 = doc["points"][0]["predicted"];
    CHECK(p0["time_s"].get<double>() == Approx(98e-6));
    CHECK(p0["error"].get<double>() == Approx(2.0 / 98));
    CHECK(p0.contains("algbw_gbyte_per_s"));
    CHECK(p0.contains("busbw_gbyte_per_s"));
    CHECK(p0["model"]["beta_link"] == "n0 -> n1");
    CHECK(doc["points"][1]["predicted"]["time_s"].get<double>() == Approx(43e-6));
    CHECK(doc["prediction"]["source"] == "the test");
    CHECK(doc["prediction"]["links"].size() == 4);
    // Still a collective document that core reads (the points' extra field is ignored).
    CHECK(core::collective_result_from_json(doc).points.size() == 2);

    const auto back = client::predictions_from_json(doc);
    REQUIRE(back.points.size() == 2);
    REQUIRE(back.points[0]);
    CHECK(back.points[0]->time_s == Approx(98e-6));
    CHECK(back.points[0]->error == Approx(2.0 / 98));
    REQUIRE(back.points[1]);
    CHECK(back.points[1]->time_s == Approx(43e-6));
    CHECK(back.lines == preds.lines);
    // A point stored without a prediction reads back as none.
    auto unpredicted = doc;
    unpredicted["points"][1]["predicted"] = nullptr;
    const auto partial = client::predictions_from_json(unpredicted);
    REQUIRE(partial.points.size() == 2);
    CHECK(partial.points[0]);
    CHECK_FALSE(partial.points[1]);
    CHECK(client::predictions_from_json(core::to_json(run)).points.empty());
}

TEST_CASE("prediction links: a matrix gives each ring link its latency and bandwidth, or names the one it lacks") {
    core::collective_spec spec;
    spec.hosts = {"a:7470", "b:7470", "c:7470"};
    json matrix{{"schema", "meshperf.matrix/1"},
                {"hosts", {{{"host", "a:7470"}}, {{"host", "b:7470"}}, {{"host", "c:7470"}}}},
                {"links",
                 {{{"from", "a:7470"}, {"to", "b:7470"}, {"gbit_per_s", 9.4}, {"lat_us", 20}},
                  {{"from", "b:7470"}, {"to", "c:7470"}, {"gbit_per_s", 5}, {"lat_us", 30}},
                  {{"from", "c:7470"}, {"to", "a:7470"}, {"gbit_per_s", 8}, {"lat_us", 25}},
                  {{"from", "a:7470"}, {"to", "c:7470"}, {"gbit_per_s", 1}, {"lat_us", 900}}}}};
    const auto links = client::links_from_document(matrix, "m.json", spec);
    REQUIRE(links.links.size() == 3);  // the ring only: a -> c is not one of its links
    CHECK(links.links[1].from == "b:7470");
    CHECK(links.links[1].to == "c:7470");
    const auto& bc = std::get<analysis::link_model>(links.links[1].fit);
    CHECK(bc.alpha_s == Approx(30e-6));
    CHECK(bc.beta_bytes_per_s * 8e-9 == Approx(5));
    CHECK(links.source.find("matrix m.json") == 0);
    // Every measured pair too, a -> c among them, for schedules that use other links.
    REQUIRE(links.pairs.size() == 4);
    CHECK(links.pairs[3].from == "a:7470");
    CHECK(links.pairs[3].to == "c:7470");
    CHECK(std::get<analysis::link_model>(links.pairs[3].fit).alpha_s == Approx(900e-6));

    matrix["links"].erase(2);  // c -> a
    try {
        client::links_from_document(matrix, "m.json", spec);
        FAIL("a ring link missing from the matrix was not noticed");
    } catch (const client::client_error& e) {
        CHECK(e.code() == client::exit_usage);
        CHECK(std::string(e.what()).find("ring link c:7470 -> a:7470") != std::string::npos);
    }
    CHECK(client::ring_links({"x", "y"}) == std::vector<std::pair<std::string, std::string>>{{"x", "y"}, {"y", "x"}});
}

TEST_CASE("prediction: a fitted model used far beyond its sizes is warned about, once for every link") {
    // Latency points at 64 B..4 KiB on a 10 µs, 10 Gbit/s link; the all-reduce's steps move
    // 2 MB messages, far beyond what was fitted.
    std::vector<analysis::model_sample> samples;
    for (std::uint64_t n : {64, 256, 1024, 4096}) {
        analysis::model_sample sample;
        sample.size_bytes = n;
        sample.time_s = 10e-6 + static_cast<double>(n) / 1.25e9;
        samples.push_back(sample);
    }
    const auto fit = analysis::fit_model(samples);
    client::prediction_links links{"fits", {{"n0", "n1", fit}, {"n1", "n2", fit}, {"n2", "n3", fit}, {"n3", "n0", fit}}};
    core::collective_result run;
    run.spec.hosts = {"n0", "n1", "n2", "n3"};
    run.points = {allreduce_4()};
    const auto preds = client::predict_run(run, links);
    REQUIRE(preds.points[0]);
    CHECK(preds.points[0]->model["alpha_us"].get<double>() == Approx(10).epsilon(1e-6));
    std::size_t warnings = 0;
    for (const auto& l : preds.lines)
        if (l.rfind("warning: every link: ", 0) == 0) ++warnings;
    CHECK(warnings >= 1);
}

}  // namespace collective_predict_test
