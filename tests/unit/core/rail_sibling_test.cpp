// core::rail_sibling_problems: `matrix --rails` without --min-rate-fraction names a rail
// that is slow against the other rails of its link.
#include "core/error.hpp"
#include "core/rail_check.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace meshperf;

namespace {

core::rail_figures rail(const std::string& name, double gbit, std::optional<double> rate = std::nullopt) {
    core::rail_figures r;
    r.name = name;
    r.gbit_per_s = gbit;
    r.rate_gbit = rate;
    if (rate) r.rate_fraction = gbit / *rate;
    return r;
}

core::run_result run_of(std::vector<core::rail_figures> rails, core::test_kind test = core::test_kind::bandwidth) {
    core::run_result run;
    for (const auto& r : rails) run.spec.rails.push_back({r.name, "q" + r.name.substr(1), "10.0.0.1", "10.0.0.2", r.rate_gbit});
    core::point_result p;
    p.test = test;
    p.size_bytes = 1 << 20;
    p.flows.resize(1);
    p.rails = std::move(rails);
    run.points.push_back(std::move(p));
    return run;
}

}  // namespace

TEST_SUITE("rail_sibling") {

TEST_CASE("a rail at half the rate of its siblings is named with its share of their median") {
    const std::vector runs{run_of({rail("r0", 0.19), rail("r1", 0.2), rail("r2", 0.096)})};
    const auto problems = core::rail_sibling_problems(runs, "h1:7470", "h2:7470", 0.9);
    REQUIRE(problems.size() == 1);
    CAPTURE(problems[0].text);
    // The median of 0.096, 0.19, 0.2 is 0.19: 0.096 is 51% of it.
    CHECK(problems[0].rail == "r2");
    CHECK(problems[0].text.find("h1:7470 rail r2 -> h2:7470 rail q2: ") == 0);
    CHECK(problems[0].text.find("51% of the median of the link's 3 rails") != std::string::npos);
    CHECK(problems[0].text.find("below 0.9") != std::string::npos);
}

TEST_CASE("rails within the fraction of their median, or at it exactly, are no problem") {
    const std::vector runs{run_of({rail("r0", 0.2), rail("r1", 0.185), rail("r2", 0.19)})};
    CHECK(core::rail_sibling_problems(runs, "a", "b", 0.9).empty());
    // Exactly at the fraction: strict comparison, healthy.
    const std::vector edge{run_of({rail("r0", 1.0), rail("r1", 0.9), rail("r2", 1.0)})};
    CHECK(core::rail_sibling_problems(edge, "a", "b", 0.9).empty());
}

TEST_CASE("rails of mixed speeds are compared by their share of their own link rate") {
    // A 100 Gbit/s rail at 95 and a 400 Gbit/s rail at 380: both 95% of their links.
    const std::vector fine{run_of({rail("r0", 95, 100.0), rail("r1", 380, 400.0)})};
    CHECK(core::rail_sibling_problems(fine, "a", "b", 0.9).empty());
    // By Gbit/s alone the 100 Gbit/s rail would be 40% of the median: with rates it is not.
    const std::vector slow{run_of({rail("r0", 95, 100.0), rail("r1", 380, 400.0), rail("r2", 190, 400.0)})};
    const auto problems = core::rail_sibling_problems(slow, "a", "b", 0.9);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].text.find("rail r2") != std::string::npos);
    CHECK(problems[0].text.find("the median rail carries") != std::string::npos);
}

TEST_CASE("failed, idle and latency rails are left out; one rail alone has no siblings") {
    auto failed = rail("r2", 0);
    failed.failed = true;
    failed.error = "stream 2 timed out";
    const std::vector runs{run_of({rail("r0", 0.2), rail("r1", 0.2), failed, rail("r3", 0)})};
    CHECK(core::rail_sibling_problems(runs, "a", "b", 0.9).empty());
    const std::vector alone{run_of({rail("r0", 0.2), rail("r1", 0.05)}, core::test_kind::latency), run_of({rail("r0", 0.2)})};
    CHECK(core::rail_sibling_problems(alone, "a", "b", 0.9).empty());
}

TEST_CASE("--rails-serial: one run per rail, compared across the runs") {
    const std::vector runs{run_of({rail("r0", 0.2)}), run_of({rail("r1", 0.2)}), run_of({rail("r2", 0.1)})};
    const auto problems = core::rail_sibling_problems(runs, "a", "b", 0.9);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].text.find("a rail r2 -> b rail q2: ") == 0);
    CHECK(problems[0].text.find("50% of the median of the link's 3 rails") != std::string::npos);
}

TEST_CASE("a fraction outside (0, 1] is refused") {
    const std::vector runs{run_of({rail("r0", 0.2), rail("r1", 0.1)})};
    CHECK_THROWS_AS(core::rail_sibling_problems(runs, "a", "b", 0), core::spec_error);
    CHECK_THROWS_AS(core::rail_sibling_problems(runs, "a", "b", 1.5), core::spec_error);
}

}  // TEST_SUITE
