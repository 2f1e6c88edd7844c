// analysis::model_use_warnings: when `meshperf plan --from` must warn about its model.
#include "analysis/model_warnings.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace model_warnings_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using namespace meshperf::analysis;

namespace {

/// A clean α–β path measured at 64 B .. 1 MiB (powers of four): one line fits exactly.
model_fit clean_fit() {
    std::vector<model_sample> s;
    for (std::uint64_t n = 64; n <= (1u << 20); n *= 4) s.push_back({n, 5e-6 + static_cast<double>(n) / 10e9, false, 1});
    return fit_model(s);
}

bool has(const std::vector<model_warning>& w, const std::string& kind) {
    return std::any_of(w.begin(), w.end(), [&](const model_warning& x) { return x.kind == kind; });
}

const model_warning& get(const std::vector<model_warning>& w, const std::string& kind) {
    return *std::find_if(w.begin(), w.end(), [&](const model_warning& x) { return x.kind == kind; });
}

}  // namespace

TEST_SUITE("model_warnings") {

TEST_CASE("inside the measured sizes, and up to 4x beyond them, nothing to say") {
    const auto m = clean_fit();
    const std::vector<model_use> uses{{"all_reduce ring", 1 << 20}, {"all_reduce tree", 4 << 20}, {"all_to_all pairwise", 16}};
    CHECK(model_use_warnings(m, uses).empty());
}

TEST_CASE("more than 4x above the largest measured size is an extrapolation, named with its furthest message") {
    const auto m = clean_fit();
    const std::vector<model_use> uses{
        {"all_reduce ring", 1 << 20}, {"all_reduce tree", (4 << 20) + 1}, {"broadcast ring", 64 << 20}, {"all_gather ring", 8 << 20}};
    const auto w = model_use_warnings(m, uses);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == "extrapolation_above");
    CHECK(w[0].message.find("3 predictions") != std::string::npos);
    CHECK(w[0].message.find("64 MiB") != std::string::npos);  // the furthest
    CHECK(w[0].message.find("broadcast ring") != std::string::npos);
    CHECK(w[0].message.find("1 MiB") != std::string::npos);   // the largest measured
    CHECK(w[0].message.find("64×") != std::string::npos);
}

TEST_CASE("more than 4x below the smallest measured size is an extrapolation too") {
    const auto m = clean_fit();
    const std::vector<model_use> uses{{"all_to_all pairwise", 16}, {"all_reduce ring", 8}};
    const auto w = model_use_warnings(m, uses);
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == "extrapolation_below");
    CHECK(w[0].message.find("1 prediction ") != std::string::npos);
    CHECK(w[0].message.find("all_reduce ring") != std::string::npos);
    CHECK(w[0].message.find("all_to_all") == std::string::npos);  // 16 B is exactly 4x below 64 B: allowed
}

TEST_CASE("a poor fit: the model misses a measured point by more than its threshold") {
    // latency that jumps at random between two levels: no line and no break fits
    std::vector<model_sample> s;
    static constexpr bool apart[] = {false, true, false, false, true, false, true, true, false, true};
    std::uint64_t n = 1;
    for (bool a : apart) {
        s.push_back({n, (a ? 30e-6 : 7e-6) + static_cast<double>(n) / 5e9, false, 1});
        n *= 4;
    }
    const auto m = fit_model(s);
    REQUIRE_FALSE(m.piecewise.has_value());
    const auto w = model_use_warnings(m, std::vector<model_use>{{"all_reduce ring", 1024}});
    REQUIRE(has(w, "poor_fit"));
    CHECK(get(w, "poor_fit").message.find("15%") != std::string::npos);
    CHECK(get(w, "poor_fit").message.find("no break explains it") != std::string::npos);
    // the clean path is not poor
    CHECK_FALSE(has(model_use_warnings(clean_fit(), std::vector<model_use>{{"all_reduce ring", 1024}}), "poor_fit"));
}

TEST_CASE("an accepted break is judged by its segments, not by the line") {
    std::vector<model_sample> s;
    for (std::uint64_t n = 1; n <= (4u << 20); n *= 2) {
        const double x = static_cast<double>(n);
        s.push_back({n, n <= 8192 ? 2e-6 + x / 5e9 : 10e-6 + x / 12e9, false, 1});
    }
    const auto m = fit_model(s);
    REQUIRE(m.piecewise.has_value());
    REQUIRE(m.line.worst_rel_residual > m.piecewise_threshold);
    CHECK(model_use_warnings(m, std::vector<model_use>{{"all_reduce ring", 1024}}).empty());
}

TEST_CASE("an underdetermined model says so and gives no fit-quality verdict") {
    std::vector<model_sample> two{{64, 5e-6, false, 1}, {65536, 20e-6, false, 1}};
    const auto m = fit_model(two);
    REQUIRE(m.line.underdetermined);
    const auto w = model_use_warnings(m, std::vector<model_use>{{"all_reduce ring", 4096}});
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == "underdetermined");
    CHECK(w[0].message.find("sweep more sizes") != std::string::npos);
    CHECK(to_json(w[0]).at("kind") == "underdetermined");
}

}  // TEST_SUITE

}  // namespace model_warnings_test
