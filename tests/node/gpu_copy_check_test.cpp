// node/gpu_copy_check and node/copy_floors: inspect --gpu-copies's verdicts on a copy
// sweep's document (the sweep itself runs on a GPU in tests/gpu/device-check; without one,
// integration-inspect asserts the UNKNOWN): each GPU's figure at or above the manifest's
// floor is OK, below it CRITICAL naming the GPU, the figure and the floor; corrupted copies
// and failed copies are CRITICAL; no CUDA, a busy daemon or a stopped sweep UNKNOWN (asked
// for, not made: never a pass); a floor for a direction not measured is CRITICAL; hostile
// documents never throw. Perfdata and JSON carry each GPU's figure.
#include "node/copy_floors.hpp"
#include "node/gpu_copy_check.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace gpu_copy_check_test {

using namespace meshperf;
using namespace meshperf::node;
using core::check_state;
using nlohmann::json;

namespace {

/// Explicit arrays throughout: a one-element braced list makes a JSON array with GCC and a copy
/// of the element with clang (nlohmann's initializer-list rule), which the ASan build showed.
json one_point(double gb_per_s) {
    return json::array({json{{"size_bytes", inspect_copy_size}, {"gb_per_s", gb_per_s}}});
}

/// One direction on `gbs.size()` GPUs at 64 MiB (the GPU end named as the sweep names it).
json direction(const std::string& copy, const std::vector<double>& gbs, int corrupt_gpu = -1) {
    json per_gpu = json::array();
    double sum = 0;
    for (std::size_t i = 0; i < gbs.size(); ++i) {
        const auto gpu = "cuda:" + std::to_string(i);
        per_gpu.push_back({{"copy", copy},
                           {"src", copy == "h2d" ? "host" : gpu},
                           {"dst", copy == "h2d" ? gpu : "host"},
                           {"verify_failed", static_cast<int>(i) == corrupt_gpu},
                           {"points", one_point(gbs[i])}});
        sum += gbs[i];
    }
    json combined = json::array({json{{"size_bytes", inspect_copy_size}, {"gb_per_s_sum", sum}}});
    return {{"copy", copy}, {"devices", gbs.size()}, {"points", std::move(combined)}, {"per_gpu", std::move(per_gpu)}};
}

json sweep(const std::vector<json>& directions) {
    json all_gpus = json::array();
    for (const auto& d : directions) all_gpus.push_back(d);
    return {{"schema", "meshperf.local/1"}, {"all_gpus", std::move(all_gpus)}};
}

inspect_result judged(const gpu_copy_survey& s, const std::optional<node_manifest>& expect) {
    inspect_result r;
    r.host = "node1";
    add_gpu_copy_findings(r, s, expect);
    return r;
}

const finding& only(const inspect_result& r, const std::string& subject) {
    const finding* hit = nullptr;
    for (const auto& f : r.findings)
        if (f.check == "gpu_copy" && f.subject == subject) hit = &f;
    REQUIRE_MESSAGE(hit, subject);
    return *hit;
}

}  // namespace

TEST_SUITE("gpu_copy_check") {

TEST_CASE("each GPU against the manifest's floor: below is CRITICAL naming GPU, figure and floor") {
    node_manifest expect;
    expect.h2d_floor_gb_per_s = 50;
    expect.d2h_floor_gb_per_s = 50;
    const auto r = judged({sweep({direction("h2d", {55.1, 54.8, 31.0, 55.0}), direction("d2h", {53, 53, 52, 53})}), "", false},
                          expect);
    CHECK(r.state == check_state::critical);
    CHECK(r.findings.size() == 8);
    CHECK(r.gpu_copies.size() == 8);
    const auto& bad = only(r, "GPU cuda:2 h2d");
    CHECK(bad.state == check_state::critical);
    CHECK(bad.message == "h2d 31.00 GB/s at 64 MiB with all 4 GPUs copying, below the manifest's floor of 50 GB/s (62%)");
    const auto& good = only(r, "GPU cuda:0 h2d");
    CHECK(good.state == check_state::ok);
    CHECK(good.message == "h2d 55.10 GB/s at 64 MiB with all 4 GPUs copying, verified (floor 50 GB/s)");
    CHECK(only(r, "GPU cuda:2 d2h").state == check_state::ok);  // its d2h is fine: the fault is one direction's

    const auto doc = to_json(r);
    CHECK(doc["gpu_copies"].size() == 8);
    CHECK(doc["gpu_copies"][2]["gpu"] == "cuda:2");
    CHECK(doc["gpu_copies"][2]["gb_per_s"].get<double>() == doctest::Approx(31.0));
    CHECK(doc["perfdata"].get<std::string>().find("h2d_cuda2_gbyte=31;;;0;") != std::string::npos);
    CHECK(doc["exit_code"] == 2);
    // The same figures without a floor: information, OK.
    const auto plain = judged({sweep({direction("h2d", {55.1, 31.0})}), "", false}, std::nullopt);
    CHECK(plain.state == check_state::ok);
    CHECK(only(plain, "GPU cuda:1 h2d").message == "h2d 31.00 GB/s at 64 MiB with all 2 GPUs copying, verified");
}

TEST_CASE("corrupted or failed copies are CRITICAL; a floor for a direction not measured is not a pass") {
    auto r = judged({sweep({direction("h2d", {55, 55}, 1)}), "", false}, std::nullopt);
    CHECK(r.state == check_state::critical);
    CHECK(only(r, "GPU cuda:1 h2d").message.find("differing bytes") != std::string::npos);
    CHECK(only(r, "GPU cuda:0 h2d").state == check_state::ok);

    r = judged({nullptr, "on 8 GPUs at once: cudaMemcpyAsync: an illegal memory access was encountered", true}, std::nullopt);
    CHECK(r.state == check_state::critical);
    CHECK(only(r, "GPUs").message == "host<->GPU copies failed: on 8 GPUs at once: cudaMemcpyAsync: an illegal memory access "
                                     "was encountered");

    node_manifest expect;
    expect.d2h_floor_gb_per_s = 40;
    r = judged({sweep({direction("h2d", {55, 55})}), "", false}, expect);
    CHECK(r.state == check_state::critical);
    CHECK(only(r, "GPUs d2h").message == "the manifest sets a d2h floor of 40 GB/s and no GPU measured d2h");
    // A GPU without its point (a sweep that ended early) under a floor: CRITICAL, never 0 >= 0.
    auto short_doc = sweep({direction("h2d", {55, 55})});
    short_doc["all_gpus"][0]["per_gpu"][1]["points"] = json::array();
    expect.h2d_floor_gb_per_s = 40;
    r = judged({short_doc, "", false}, expect);
    CHECK(only(r, "GPU cuda:1 h2d").state == check_state::critical);
    CHECK(only(r, "GPU cuda:1 h2d").message == "h2d measured nothing with all 2 GPUs copying");
}

TEST_CASE("not measured for the circumstances' sake is UNKNOWN, never a pass") {
    auto r = judged({nullptr, "no NVIDIA driver: libcuda.so.1 could not be loaded", false}, std::nullopt);
    CHECK(r.state == check_state::unknown);
    CHECK(only(r, "GPUs").message == "no host<->GPU copy measured: no NVIDIA driver: libcuda.so.1 could not be loaded");
    CHECK(r.gpu_copies.empty());
    r = judged({nullptr, "this daemon is measuring (run r-1): ask again when it is done", false}, std::nullopt);
    CHECK(r.state == check_state::unknown);
    // A sweep the daemon stopped: the GPUs it did not reach are UNKNOWN, with the reason.
    auto stopped = sweep({direction("h2d", {55, 55})});
    stopped["all_gpus"][0]["per_gpu"][1]["points"] = json::array();
    stopped["stopped"] = "the inspection was stopped (the daemon is shutting down)";
    r = judged({stopped, "", false}, std::nullopt);
    CHECK(r.state == check_state::unknown);
    CHECK(only(r, "GPU cuda:1 h2d").message == "h2d not measured: the inspection was stopped (the daemon is shutting down)");
}

TEST_CASE("hostile or empty documents give no figure and never throw") {
    for (const json& doc : {json(), json(7), json::object(), json{{"all_gpus", 3}}, json{{"all_gpus", {1, "x", nullptr}}},
                            json{{"all_gpus", json::array({json{{"copy", 4}, {"points", "no"},
                                                               {"per_gpu", json::array({json{{"src", 9}, {"points", json::array({5})}}})}}})}},
                            json{{"all_gpus", json::array({json{{"copy", "h2d"}, {"per_gpu", json::array({json::object()})},
                                                               {"points", json::array({json{{"size_bytes", -1}}})}}})}}}) {
        CAPTURE(doc.dump());
        std::vector<gpu_copy_figure> figures;
        CHECK_NOTHROW(figures = all_gpu_copy_figures(doc));
        for (const auto& f : figures) CHECK_FALSE(f.gb_per_s > 0);
        inspect_result r;
        CHECK_NOTHROW(add_gpu_copy_findings(r, {doc, "", false}, std::nullopt));
        CHECK(r.state != check_state::ok);  // nothing measured is never OK
    }
}

TEST_CASE("inspect's sweep: h2d and d2h at 64 MiB on every GPU, verified") {
    const auto s = inspect_copy_spec();
    CHECK(s.copies == "h2d,d2h");
    CHECK(s.sizes == std::vector<std::uint64_t>{64ull << 20});
    CHECK(s.verify);
    CHECK(s.all_gpus);
    CHECK_NOTHROW(core::validate(s));
}

}  // TEST_SUITE

}  // namespace gpu_copy_check_test
