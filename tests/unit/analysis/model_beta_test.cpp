// analysis/model's β check (issue 26, item 4): a fitted β above every measured bandwidth
// point by more than its tolerance (a token bucket's burst speeding single ping-pong
// messages: β 0.306 Gbit/s from streams of 0.191) says so in the model's JSON, its text and
// the warnings of its use, and with_measured_beta predicts with the measured bandwidth.
// Also: an underdetermined fit does not say "one line fits badly"; a failed run's "no model"
// says the run failed instead of advising a sweep; the reason has no doubled "model:" prefix.
#include "analysis/collective/predictions.hpp"
#include "analysis/model.hpp"
#include "analysis/model_warnings.hpp"
#include "client/collective/links.hpp"
#include "client/support/run_model.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <vector>

namespace model_beta_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using analysis::model_sample;

namespace {

constexpr double bucket_gbit = 0.306, stream_gbit = 0.191;

/// Issue 26's shape: latency points 1 B .. 4 MiB at t = 60 µs + n / 0.306 Gbit/s (the burst),
/// bandwidth points 256 KiB .. 4 MiB at 0.191 Gbit/s, each stating ±1%.
std::vector<model_sample> bursty() {
    std::vector<model_sample> v;
    for (std::uint64_t n = 1; n <= (4u << 20); n *= 2)
        v.push_back({n, 60e-6 + static_cast<double>(n) * 8e-9 / bucket_gbit, false, 1, 0.01, {}});
    for (std::uint64_t n = 256u << 10; n <= (4u << 20); n *= 2)
        v.push_back({n, static_cast<double>(n) * 8e-9 / stream_gbit, true, 1, 0.01, {}});
    return v;
}

/// A consistent path: both kinds of point at 0.191 Gbit/s.
std::vector<model_sample> consistent() {
    std::vector<model_sample> v;
    for (std::uint64_t n = 1; n <= (4u << 20); n *= 2) {
        v.push_back({n, 60e-6 + static_cast<double>(n) * 8e-9 / stream_gbit, false, 1, 0.01, {}});
        if (n >= (256u << 10)) v.push_back({n, 2e-6 + static_cast<double>(n) * 8e-9 / stream_gbit, true, 1, 0.01, {}});
    }
    return v;
}

}  // namespace

TEST_CASE("a β above every bandwidth point by more than its tolerance is flagged") {
    const auto m = analysis::fit_model(bursty());
    REQUIRE(m.beta_measured);
    const auto& b = *m.beta_measured;
    CHECK(b.measured_gbit_per_s == doctest::Approx(stream_gbit));
    CHECK(b.tolerance == doctest::Approx(analysis::min_beta_tolerance));
    CHECK(b.beta_gbit_per_s > stream_gbit * 1.3);  // the latency points pull it up
    CHECK(m.beta_unmeasured());
    CHECK_FALSE(b.replaced);
    const auto text = b.message();
    MESSAGE(text);
    CHECK(text.find("above the fastest bandwidth point (0.191 Gbit/s at ") != std::string::npos);
    CHECK(text.find("), more than the 5% its precision allows: β was not measured") != std::string::npos);
    const auto j = analysis::to_json(m);
    CHECK(j["beta_check"]["exceeds"] == true);
    REQUIRE(j["warnings"].size() == 1);
    CHECK(j["warnings"][0] == text);
    CHECK(analysis::describe(m).find("; warning: the fitted β") != std::string::npos);
    // The JSON reads back with its check (a model file fed to collective --predict --model).
    const auto back = analysis::model_fit_from_json(j);
    CHECK(back.beta_unmeasured());
    // The model block under a run's tables says so.
    client::run_model rm;
    rm.fit = m;
    CHECK(client::render_model_text(rm).find("  warning: the fitted β") != std::string::npos);
}

TEST_CASE("with_measured_beta predicts with the measured bandwidth, and the warning says so") {
    const auto m = analysis::with_measured_beta(analysis::fit_model(bursty()));
    CHECK(m.line.beta_gbit_per_s() == doctest::Approx(stream_gbit));
    CHECK(m.beta_measured->replaced);
    CHECK(m.beta_measured->message().find("predictions use the measured 0.191 Gbit/s instead") != std::string::npos);
    // A 4 MiB message over the link: at the measured rate, not the bucket's.
    const auto link = analysis::link_model::from_fit(m, 4 << 20);
    CHECK(link.beta_bytes_per_s * 8e-9 == doctest::Approx(stream_gbit));
    const std::vector<analysis::model_use> uses{{"all_reduce ring", 1 << 20}};
    const auto w = analysis::model_use_warnings(m, uses);
    const auto beta = std::find_if(w.begin(), w.end(), [](const analysis::model_warning& x) { return x.kind == "beta_above_measured"; });
    REQUIRE(beta != w.end());
    CHECK(beta->message.find("predictions use the measured") != std::string::npos);
}

TEST_CASE("collective --predict --model MODEL.json: every link predicts with the measured bandwidth") {
    const nlohmann::json doc{{"schema", "meshperf.model/1"}, {"model", analysis::to_json(analysis::fit_model(bursty()))}};
    core::collective_spec spec;
    spec.hosts = {"a:7470", "b:7470", "c:7470"};
    const auto links = client::links_from_document(doc, "model.json", spec);
    REQUIRE(links.links.size() == 3);
    for (const auto& l : links.links) {
        const auto& fit = std::get<analysis::model_fit>(l.fit);
        CHECK(fit.line.beta_gbit_per_s() == doctest::Approx(stream_gbit));
        CHECK(fit.beta_measured->replaced);
    }
}

TEST_CASE("a β the bandwidth points reach is left alone") {
    const auto m = analysis::fit_model(consistent());
    REQUIRE(m.beta_measured);
    CHECK_FALSE(m.beta_unmeasured());
    CHECK(analysis::to_json(m)["warnings"].empty());
    const auto same = analysis::with_measured_beta(m);
    CHECK(same.line.beta_bytes_per_s == m.line.beta_bytes_per_s);
    CHECK_FALSE(same.beta_measured->replaced);
    // Latency points only: nothing to check against.
    std::vector<model_sample> latency;
    for (const auto& s : consistent())
        if (!s.stream) latency.push_back(s);
    CHECK_FALSE(analysis::fit_model(latency).beta_measured);
    CHECK(analysis::to_json(analysis::fit_model(latency))["beta_check"].is_null());
}

TEST_CASE("an underdetermined fit says so, not also that one line fits badly") {
    // Latency and stream points at two sizes that disagree: 4 points, 3 parameters, 2 sizes.
    std::vector<model_sample> mixed{{64, 5e-6, false, 1}, {4096, 60e-6, false, 1}, {64, 0.1e-6, true, 1}, {4096, 1.1e-6, true, 1}};
    const auto m = analysis::fit_model(mixed);
    REQUIRE(m.line.underdetermined);
    CHECK(m.piecewise_rejected.empty());
    client::run_model rm;
    rm.fit = m;
    const auto text = client::render_model_text(rm);
    CHECK(text.find("underdetermined") != std::string::npos);
    CHECK(text.find("one line fits badly") == std::string::npos);
}

TEST_CASE("no model: a failed run says it failed; the reason has no doubled prefix") {
    core::run_result run;
    run.id = "r-1";
    run.state = core::run_state::failed;
    run.error = "peer closed the connection";
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = 16;
    p.gbit_per_s = 0.01;
    run.points.push_back(p);
    const auto m = client::fit_run_model(run);
    REQUIRE_FALSE(m.fit);
    CHECK(m.why_not.find("run r-1 failed: peer closed the connection, with points at too few sizes to fit") == 0);
    CHECK(m.why_not.find("model: ") == std::string::npos);
    CHECK(m.why_not.find("--sizes") == std::string::npos);  // it was advised to sweep up to 4 MiB
    run.state = core::run_state::completed;
    const auto done = client::fit_run_model(run);
    CHECK(done.why_not.find("the fit needs points at two or more message sizes") == 0);
    run.points.clear();
    run.state = core::run_state::failed;
    CHECK(client::fit_run_model(run).why_not == "run r-1 failed: peer closed the connection, before any latency or bandwidth point to fit");
}

}  // namespace model_beta_test
