#include "core/check.hpp"
#include "core/error.hpp"

#include <cmath>
#include <fmt/format.h>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace check_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

const check_target node2{"node2:7470", "tcp", ""};

check_figure bw(double gbit, std::uint64_t size = 1 << 20) { return {figure_kind::bandwidth, size, gbit}; }
check_figure lat(double us, std::uint64_t size = 8) { return {figure_kind::latency, size, us}; }

check_limits absolute(double min_gbit, double max_lat_us) {
    check_limits l;
    l.min_gbit = min_gbit;
    l.max_lat_us = max_lat_us;
    return l;
}

check_limits baseline_limits() {
    check_limits l;
    l.baseline = {bw(9.41), lat(23.1)};
    return l;  // warn 0.9, crit 0.75
}

check_result run(std::vector<check_figure> figures, const check_limits& l) { return evaluate_check(node2, figures, l); }

}  // namespace

TEST_SUITE("check") {

TEST_CASE("states, exit codes, names and ranking") {
    CHECK(exit_code(check_state::ok) == 0);
    CHECK(exit_code(check_state::warning) == 1);
    CHECK(exit_code(check_state::critical) == 2);
    CHECK(exit_code(check_state::unknown) == 3);
    CHECK(to_string(check_state::ok) == "OK");
    CHECK(to_string(check_state::warning) == "WARNING");
    CHECK(to_string(check_state::critical) == "CRITICAL");
    CHECK(to_string(check_state::unknown) == "UNKNOWN");
    CHECK(worst(check_state::ok, check_state::unknown) == check_state::unknown);
    CHECK(worst(check_state::unknown, check_state::warning) == check_state::warning);
    CHECK(worst(check_state::critical, check_state::unknown) == check_state::critical);
    CHECK(worst(check_state::warning, check_state::critical) == check_state::critical);
    CHECK(worst(check_state::ok, check_state::ok) == check_state::ok);
}

TEST_CASE("describe the target") {
    CHECK(describe(node2) == "tcp to node2:7470");
    CHECK(describe({"node2:7470", "rdma", "node1:7470"}) == "rdma from node1:7470 to node2:7470");
    CHECK(describe(check_target{}) == "");
}

TEST_CASE("absolute limits: OK line with perfdata") {
    const auto r = run({bw(9.41), lat(23.1)}, absolute(9, 50));
    CHECK(r.state == check_state::ok);
    CHECK(nagios_line(r) ==
          "MESHPERF OK - tcp to node2:7470: 9.41 Gbit/s at 1 MiB, 23.1 us at 8 B | bw_gbit=9.41;;9:;0; lat_us=23.1;;50;0;");
}

TEST_CASE("absolute limits: beyond either is CRITICAL, exactly at it is OK") {
    auto r = run({bw(2.35), lat(23.1)}, absolute(9, 50));
    CHECK(r.state == check_state::critical);
    CHECK(exit_code(r.state) == 2);
    CHECK(nagios_line(r) == "MESHPERF CRITICAL - tcp to node2:7470: 2.35 Gbit/s at 1 MiB (CRITICAL: below minimum 9 "
                            "Gbit/s), 23.1 us at 8 B | bw_gbit=2.35;;9:;0; lat_us=23.1;;50;0;");
    r = run({bw(9.41), lat(50.5)}, absolute(9, 50));
    CHECK(r.state == check_state::critical);
    CHECK(r.figures[1].reason == "above maximum 50 us");
    r = run({bw(9), lat(50)}, absolute(9, 50));
    CHECK(r.state == check_state::ok);

    // Only one kind limited: the other figure is reported, unjudged.
    check_limits only_bw;
    only_bw.min_gbit = 5;
    r = run({bw(9.41), lat(5000)}, only_bw);
    CHECK(r.state == check_state::ok);
    CHECK_FALSE(r.figures[1].crit_at);
    CHECK(nagios_line(r).ends_with("lat_us=5000;;;0;"));
}

TEST_CASE("baseline: bandwidth below warn x baseline warns, below crit x baseline is critical") {
    const auto l = baseline_limits();
    auto r = run({bw(9.0)}, l);  // 96%
    CHECK(r.state == check_state::ok);
    REQUIRE(r.figures[0].warn_at);
    CHECK(*r.figures[0].warn_at == doctest::Approx(8.469));
    CHECK(*r.figures[0].crit_at == doctest::Approx(7.0575));
    r = run({bw(8.0)}, l);  // 85%
    CHECK(r.state == check_state::warning);
    CHECK(r.figures[0].reason == "below 0.9 x baseline 9.41 = 8.47 Gbit/s (85% of baseline)");
    r = run({bw(7.0)}, l);  // 74%
    CHECK(r.state == check_state::critical);
    CHECK(r.figures[0].reason == "below 0.75 x baseline 9.41 = 7.06 Gbit/s (74% of baseline)");
    CHECK(nagios_line(r) == "MESHPERF CRITICAL - tcp to node2:7470: 7.00 Gbit/s at 1 MiB (CRITICAL: below 0.75 x "
                            "baseline 9.41 = 7.06 Gbit/s (74% of baseline)) | bw_gbit=7;8.469:;7.0575:;0;");
}

TEST_CASE("baseline: latency above baseline / warn warns, above baseline / crit is critical") {
    const auto l = baseline_limits();
    auto r = run({lat(25.0)}, l);  // 23.1 / 0.9 = 25.67
    CHECK(r.state == check_state::ok);
    CHECK(*r.figures[0].warn_at == doctest::Approx(25.6667).epsilon(1e-4));
    CHECK(*r.figures[0].crit_at == doctest::Approx(30.8));
    r = run({lat(27.0)}, l);
    CHECK(r.state == check_state::warning);
    CHECK(r.figures[0].reason == "above baseline 23.1 / 0.9 = 25.7 us (1.17 x baseline)");
    r = run({lat(31.0)}, l);
    CHECK(r.state == check_state::critical);
    CHECK(nagios_line(r) == "MESHPERF CRITICAL - tcp to node2:7470: 31.0 us at 8 B (CRITICAL: above baseline 23.1 / "
                            "0.75 = 30.8 us (1.34 x baseline)) | lat_us=31;25.6667;30.8;0;");
}

TEST_CASE("baseline and absolute together: the strictest threshold, the worst state") {
    auto l = baseline_limits();
    l.min_gbit = 8.0;  // stricter than 0.75 x 9.41
    auto r = run({bw(7.5)}, l);
    CHECK(r.state == check_state::critical);
    CHECK(*r.figures[0].crit_at == 8.0);
    CHECK(r.figures[0].reason == "below minimum 8 Gbit/s; below 0.9 x baseline 9.41 = 8.47 Gbit/s (80% of baseline)");
    l.max_lat_us = 100;  // looser than 23.1 / 0.75
    r = run({lat(40)}, l);
    CHECK(r.state == check_state::critical);
    CHECK(*r.figures[0].crit_at == doctest::Approx(30.8));
}

TEST_CASE("baseline without this figure is UNKNOWN; CRITICAL still outranks it") {
    const auto l = baseline_limits();
    auto r = run({bw(9.41), bw(40, 64 << 10)}, l);
    CHECK(r.state == check_state::unknown);
    CHECK(r.figures[1].reason.starts_with("no baseline for bandwidth at 64 KiB"));
    r = run({bw(1.0), bw(40, 64 << 10)}, l);
    CHECK(r.state == check_state::critical);
    // Several sizes of one kind: labels carry the size.
    const std::string line = nagios_line(r);
    CHECK(line.find(" | bw_gbit_1M=1;8.469:;7.0575:;0; bw_gbit_64K=40;;;0;") != std::string::npos);
}

TEST_CASE("figures that are not measurements are UNKNOWN, perfdata U") {
    auto r = run({bw(std::nan("")), lat(23.1)}, absolute(9, 50));
    CHECK(r.state == check_state::unknown);
    const std::string line = nagios_line(r);
    CHECK(line.starts_with("MESHPERF UNKNOWN - tcp to node2:7470: bandwidth at 1 MiB: no valid figure (UNKNOWN: "));
    CHECK(line.find("bw_gbit=U;;9:;0;") != std::string::npos);
    r = run({lat(0)}, absolute(9, 50));
    CHECK(r.state == check_state::unknown);
    r = run({bw(-1)}, absolute(9, 50));
    CHECK(r.state == check_state::unknown);
}

TEST_CASE("no figures, or a check that could not run: UNKNOWN without perfdata") {
    auto r = run({}, absolute(9, 50));
    CHECK(r.state == check_state::unknown);
    CHECK(nagios_line(r) == "MESHPERF UNKNOWN - tcp to node2:7470: no figures were measured");
    r = unknown_result(node2, "peer unreachable: connection refused");
    CHECK(exit_code(r.state) == 3);
    CHECK(nagios_line(r) == "MESHPERF UNKNOWN - tcp to node2:7470: peer unreachable: connection refused");
    // Free text never breaks the line or opens perfdata.
    r = unknown_result(node2, "bad | reply\nfrom daemon");
    CHECK(nagios_line(r) == "MESHPERF UNKNOWN - tcp to node2:7470: bad / reply from daemon");
    r = unknown_result({}, "--min-gbit needs a number");
    CHECK(nagios_line(r) == "MESHPERF UNKNOWN - --min-gbit needs a number");
}

TEST_CASE("invalid limits throw spec_error") {
    CHECK_THROWS_AS(validate(check_limits{}), spec_error);
    CHECK_THROWS_AS(run({bw(1)}, check_limits{}), spec_error);
    CHECK_THROWS_AS(validate(absolute(0, 50)), spec_error);
    CHECK_THROWS_AS(validate(absolute(9, -1)), spec_error);
    CHECK_THROWS_AS(validate(absolute(9, std::nan(""))), spec_error);
    auto l = baseline_limits();
    CHECK_NOTHROW(validate(l));
    l.warn = 0.7;  // below crit 0.75
    CHECK_THROWS_AS(validate(l), spec_error);
    l.warn = 1.1;
    CHECK_THROWS_AS(validate(l), spec_error);
    l.warn = 0.9;
    l.crit = 0;
    CHECK_THROWS_AS(validate(l), spec_error);
    l = baseline_limits();
    l.warn = l.crit = 1.0;  // any drop is critical: allowed
    CHECK_NOTHROW(validate(l));
    l = baseline_limits();
    l.baseline.push_back(bw(9.0));
    CHECK_THROWS_AS(validate(l), spec_error);
    l = baseline_limits();
    l.baseline[0].value = 0;
    CHECK_THROWS_AS(validate(l), spec_error);
}

TEST_CASE("perfdata items") {
    CHECK(perfdata_item("bw_gbit", 9.41, "", "9:", "0", "") == "bw_gbit=9.41;;9:;0;");
    CHECK(perfdata_item("bw 1M", 9.41) == "'bw 1M'=9.41;;;;");
    CHECK(perfdata_item("x", std::nan("")) == "x=U;;;;");
    CHECK(perfdata_item("x", 1e6) == "x=1000000;;;;");
    CHECK(perfdata_item("x", 0.000123456) == "x=0.000123456;;;;");
    CHECK(perfdata_item("x", 123.456789) == "x=123.457;;;;");
    CHECK(perfdata_item("x", 0) == "x=0;;;;");
    CHECK_THROWS_AS(perfdata_item("a=b", 1), spec_error);
    CHECK_THROWS_AS(perfdata_item("it's", 1), spec_error);
    CHECK_THROWS_AS(perfdata_item("", 1), spec_error);
}

TEST_CASE("a status line too long for every rail: each detail line below it names its rail") {
    std::vector<check_figure> figures;
    for (int k = 0; k < 8; ++k) {
        figures.push_back(bw(k == 5 ? 2.5 : 9.5));
        figures.back().rail = "mlx5_rail_" + std::to_string(k);
    }
    const check_result r = run(figures, absolute(5, 100));
    CHECK(r.state == check_state::critical);
    const std::string output = nagios_output(r);
    CAPTURE(output);
    REQUIRE(output.find("details below") != std::string::npos);  // the long form, not one line
    CHECK(output.find("\nCRITICAL: rail mlx5_rail_5: 2.5") != std::string::npos);
    for (int k : {0, 1, 2, 3, 4, 6, 7})
        CHECK(output.find(fmt::format("\nOK: rail mlx5_rail_{}: 9.5", k)) != std::string::npos);
}

TEST_CASE("JSON of a result") {
    const auto r = run({bw(2.35), lat(23.1)}, absolute(9, 50));
    const auto j = to_json(r);
    CHECK(j["state"] == "CRITICAL");
    CHECK(j["exit_code"] == 2);
    CHECK(j["target"]["peer"] == "node2:7470");
    CHECK(j["target"]["transport"] == "tcp");
    REQUIRE(j["figures"].size() == 2);
    CHECK(j["figures"][0]["test"] == "bandwidth");
    CHECK(j["figures"][0]["size_bytes"] == 1048576);
    CHECK(j["figures"][0]["gbit_per_s"] == 2.35);
    CHECK(j["figures"][0]["state"] == "CRITICAL");
    CHECK(j["figures"][0]["crit_at"] == 9.0);
    CHECK(j["figures"][0]["warn_at"].is_null());
    CHECK(j["figures"][1]["lat_us"] == 23.1);
    CHECK(j["figures"][1]["state"] == "OK");
    CHECK(j["line"] == nagios_line(r));
    const auto u = to_json(unknown_result(node2, "daemon down"));
    CHECK(u["exit_code"] == 3);
    CHECK(u["message"] == "daemon down");
    CHECK(u["figures"].empty());
}

}  // TEST_SUITE

}  // namespace check_test
