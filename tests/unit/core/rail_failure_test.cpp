// A rail that failed mid-point (issue 28): marked failed with its error, left out of the
// point's aggregate, kept in later points' rails as dropped, CRITICAL in check --rails with
// its error, a JSON round trip of the failed entry, and a flow's window without its streams.
#include "client/render/rail_table.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/rail_check.hpp"
#include "core/rail_figures.hpp"
#include "core/result.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace core = meshperf::core;

namespace {

std::vector<core::rail_pair> three_rails() {
    std::vector<core::rail_pair> rails(3);
    for (int k = 0; k < 3; ++k)
        rails[k] = {"ra" + std::to_string(k), "rb" + std::to_string(k), "10.62." + std::to_string(k) + ".1",
                    "10.62." + std::to_string(k) + ".2", 0.2};
    return rails;
}

const std::string cut = "data stream failed at the peer: Connection timed out (stream 1 on rail ra1, 10.62.1.1 -> 10.62.1.2, peer's rb1)";

}  // namespace

TEST_CASE("a failed rail is marked with its error, zeroed, and survivable only while another rail works") {
    const auto rails = three_rails();
    auto split = core::split_by_rail({{0.19, 0.05, 0.19}}, rails, 1);
    core::mark_failed_rails(split, {{"ra1", cut}});
    CHECK_FALSE(split[0].failed);
    CHECK(split[1].failed);
    CHECK(split[1].error == cut);
    CHECK(split[1].gbit_per_s == 0);
    CHECK(split[1].flow_gbit_per_s == std::vector<double>{0.0});
    CHECK_FALSE(split[1].rate_fraction.has_value());
    for (const auto& r : split) CHECK_NOTHROW(core::check_sane(r));
    const auto w = core::rail_warnings(split, rails);
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("rail ra1 failed: " + cut) == 0);
    // RDMA's errors start with the rail's name: the warning does not name it twice.
    auto named = split;
    named[1].error = "rail ra1: RDMA failed at the initiator: rxe1 port 1: work completion failed";
    const auto once = core::rail_warnings(named, rails);
    REQUIRE(once.size() == 1);
    CHECK(once[0].find("rail ra1 failed: RDMA failed at the initiator: rxe1 port 1") == 0);

    CHECK(core::rails_survive(rails, {{"ra1", cut}}));
    CHECK(core::rails_survive(rails, {{"ra0", "x"}, {"ra1", cut}}));
    CHECK_FALSE(core::rails_survive(rails, {{"ra0", "x"}, {"ra1", cut}, {"ra2", "y"}}));
    CHECK_FALSE(core::rails_survive({rails[0]}, {}));  // one rail: its failure is the point's
    CHECK_FALSE(core::rails_survive({}, {}));

    std::vector<core::rail_failure> f{{"ra1", "first"}};
    core::merge_rail_failures(f, {{"ra1", "second"}, {"ra2", "other"}});
    REQUIRE(f.size() == 2);
    CHECK(f[0].error == "first");
    CHECK(f[1].name == "ra2");

    auto unexplained = split[1];
    unexplained.error.clear();
    CHECK_THROWS_AS(core::check_sane(unexplained), core::insane_figure);
}

TEST_CASE("a failed rail's entry survives a JSON round trip; a rail that worked has no failed fields") {
    const auto rails = three_rails();
    auto split = core::split_by_rail({{0.19, 0.05, 0.19}}, rails, 1);
    core::mark_failed_rails(split, {{"ra1", cut}});
    const auto j = core::to_json(split[1]);
    CHECK(j.at("failed") == true);
    CHECK(j.at("error") == cut);
    const auto back = core::rail_figures_from_json(j);
    CHECK(back.failed);
    CHECK(back.error == cut);
    CHECK(back.name == "ra1");
    CHECK(back.gbit_per_s == 0);
    CHECK(*back.rate_gbit == doctest::Approx(0.2));
    const auto ok = core::to_json(split[0]);
    CHECK_FALSE(ok.contains("failed"));
    CHECK_FALSE(ok.contains("error"));
    CHECK_FALSE(core::rail_figures_from_json(ok).failed);
}

TEST_CASE("rails dropped in an earlier point are listed failed, in the run's order") {
    const auto rails = three_rails();
    const std::vector<core::rail_pair> live{rails[0], rails[2]};
    const auto measured = core::split_by_rail({{0.19, 0.18}, {0.17, 0.16}}, live, 1);
    const auto all = core::with_dropped_rails(measured, rails, {{"ra1", "not measured: it failed in point 1"}}, 2);
    REQUIRE(all.size() == 3);
    CHECK(all[0].name == "ra0");
    CHECK(all[1].name == "ra1");
    CHECK(all[1].failed);
    CHECK(all[1].flow_gbit_per_s.size() == 2);
    CHECK(*all[1].rate_gbit == doctest::Approx(0.2));
    CHECK(all[2].gbit_per_s == doctest::Approx(0.34));
    CHECK_NOTHROW(core::check_sane(all[1]));
}

TEST_CASE("check --rails: a failed rail is CRITICAL with its error, whatever its rate") {
    const auto rails = three_rails();
    core::run_result run;
    run.spec.rails = rails;
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = 64 << 10;
    p.flows.resize(1);
    p.rails = core::split_by_rail({{0.19, 0.0, 0.19}}, rails, 1);
    core::mark_failed_rails(p.rails, {{"ra1", cut}});
    p.rails[1].rate_gbit.reset();  // even with no rate known: failed, not UNKNOWN
    p.gbit_per_s = 0.38;
    run.points.push_back(p);
    const auto v = core::rail_verdicts(run, 0.9);
    REQUIRE(v.size() == 3);
    CHECK(v[0].state == core::check_state::ok);
    CHECK(v[1].state == core::check_state::critical);
    CHECK(v[1].figure.rail == "ra1");
    CHECK(v[1].reason == "failed: " + cut);
    CHECK(v[2].state == core::check_state::ok);
    bool unknown = false;
    const auto problems = core::rail_link_problems(run, "h1:7470", "h2:7470", 0, unknown);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].rail == "ra1");
    CHECK(problems[0].text.find("h1:7470 rail ra1 -> h2:7470 rail rb1: failed at 64 KiB: data stream failed") == 0);

    // The table: the rail FAILED, the aggregate over the two that worked.
    const auto table = meshperf::client::rail_table_rows(run, core::test_kind::bandwidth);
    REQUIRE(table.rows.size() == 5);
    CHECK(table.rows[2][1] == "ra1 -> rb1");  // both ends' rails named
    CHECK(table.rows[2][2] == "FAILED");
    CHECK(table.rows[4][1] == "all 2 (1 failed)");
    CHECK(table.rows[4][4] == "95.0");  // 0.38 of 2 x 0.2
}

TEST_CASE("a flow's window without a failed rail's streams counts only the others") {
    core::flow_tracker t(3, 0.5);
    t.add(0.25, std::vector<std::uint64_t>{10, 10, 10});
    t.add(0.5, std::vector<std::uint64_t>{100, 100, 100});
    t.add(1.5, std::vector<std::uint64_t>{1100, 600, 1100});
    t.add(2.5, std::vector<std::uint64_t>{2100, 600, 2100});
    const auto kept = t.without_streams({false, true, false});
    REQUIRE(kept.intervals() == 2);
    const auto f = kept.figures("initiator->peer", 100);
    CHECK(f.bytes == 4000);
    CHECK(f.stream_gbit_per_s.size() == 3);
    CHECK(f.stream_gbit_per_s[1] == 0);
    CHECK(f.stream_gbit_per_s[0] == doctest::Approx(f.stream_gbit_per_s[2]));
    CHECK(kept.mean_interval_rate() == doctest::Approx(2000.0));
    CHECK(t.figures("initiator->peer", 100).bytes == 4500);  // the original is unchanged
}
