// Rails: matching two daemons' /v1/info rails, the spec's rail checks, the split of a
// point's streams by rail, and check --rails verdicts.
#include "client/support/rail_match.hpp"
#include "core/error.hpp"
#include "core/rail_check.hpp"
#include "core/rail_figures.hpp"
#include "core/run_spec.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using meshperf::client::match_rails;
using meshperf::client::rail_request;
using nlohmann::json;
namespace core = meshperf::core;

namespace {

json rail(const std::string& name, const std::string& addr, double rate = 100) {
    return {{"name", name}, {"addresses", json::array({addr, "fe80::1/64"})}, {"rate_gbit_per_s", rate}, {"link_up", true}};
}

json side_a() { return json::array({rail("ra0", "10.60.0.1/24"), rail("ra1", "10.60.1.1/24"), rail("ra2", "10.60.2.1/24", 200)}); }
json side_b() { return json::array({rail("rb0", "10.60.0.2/24"), rail("rb1", "10.60.1.2/24"), rail("rb2", "10.60.2.2/24", 400)}); }

std::string error_of(const json& a, const json& b, const rail_request& r) {
    try {
        match_rails(a, b, r, "initiator A", "peer B");
    } catch (const core::spec_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("rails of both daemons are matched by subnet, the lower link rate kept") {
    const auto m = match_rails(side_a(), side_b(), {}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 3);
    CHECK(m.rails[0].name == "ra0");
    CHECK(m.rails[0].peer_name == "rb0");
    CHECK(m.rails[0].local_address == "10.60.0.1");
    CHECK(m.rails[0].peer_address == "10.60.0.2");
    CHECK(m.rails[2].peer_name == "rb2");
    CHECK(*m.rails[2].rate_gbit == doctest::Approx(200));
    CHECK(m.notes.empty());
}

TEST_CASE("--rails all leaves out the rail that carries the control connection; named rails are kept") {
    using meshperf::client::without_control_rails;
    // The initiator daemon is reached at 10.60.0.1: its ra0 is the management network.
    std::vector<std::string> notes;
    const auto a = without_control_rails(side_a(), {}, {"10.60.0.1"}, "initiator A", notes);
    REQUIRE(a.size() == 2);
    CHECK(a[0]["name"] == "ra1");
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("initiator A's rail ra0 (10.60.0.1) carries the control connection") == 0);
    // The peer's matching rail goes the same way; the rest match.
    const auto b = without_control_rails(side_b(), {}, {"10.60.0.2"}, "peer B", notes);
    const auto m = match_rails(a, b, {}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 2);
    CHECK(m.rails[0].name == "ra1");
    // A peer reached by an address no rail has: nothing left out.
    notes.clear();
    CHECK(without_control_rails(side_b(), {}, {"192.0.2.9"}, "peer B", notes).size() == 3);
    CHECK(notes.empty());
    // Rails named on the command line are measured as asked.
    rail_request named;
    named.rails = "ra0,ra1";
    CHECK(without_control_rails(side_a(), named, {"10.60.0.1"}, "initiator A", notes).size() == 3);
}

TEST_CASE("rail names, maps and one-sided rails are refused with what exists") {
    CHECK(error_of(side_a(), side_b(), {"ra9", ""}).find("has no rail ra9; its rails are ra0, ra1, ra2") != std::string::npos);
    CHECK(error_of(side_a(), side_b(), {"rb0", ""}).find("is peer B's") != std::string::npos);
    CHECK(error_of(side_a(), side_b(), {"all", "ra0=rb1,ra1=rb1"}).find("pairs peer B's rail rb1 twice") != std::string::npos);
    CHECK(error_of(side_a(), side_b(), {"all", "ra0=rb0,ra0=rb1"}).find("pairs initiator A's rail ra0 twice") != std::string::npos);
    CHECK(error_of(side_a(), json::array(), {}).find("rails on one side only") != std::string::npos);
    // With all, a rail of B without a partner is named.
    auto b = side_b();
    b.push_back(rail("rb3", "10.60.3.2/24"));
    CHECK(error_of(side_a(), b, {}).find("rail rb3 has no partner") != std::string::npos);
    // A selected rail without a partner in its subnet or of its name.
    auto a = side_a();
    a.push_back(rail("ra3", "10.99.0.1/24"));
    CHECK(error_of(a, side_b(), {"ra3", ""}).find("rail ra3 has no partner on peer B") != std::string::npos);
    // The map pairs across subnets; a name match is said.
    const auto m = match_rails(side_a(), side_b(), {"ra0", "ra0=rb1"}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 1);
    CHECK(m.rails[0].peer_name == "rb1");
}

TEST_CASE("a spec with rails: TCP only, no latency over several, streams x rails within the limit") {
    core::run_spec s;
    s.peer = "10.0.0.2:7470";
    s.sizes = {1 << 20};
    s.tests = {core::test_kind::bandwidth};
    s.rails = match_rails(side_a(), side_b(), {}, "A", "B").rails;
    CHECK_NOTHROW(core::validate(s));
    CHECK(core::streams_per_direction(s, core::test_kind::bandwidth) == 3);
    CHECK(core::streams_per_direction(s, core::test_kind::latency) == 1);
    auto lat = s;
    lat.tests = {core::test_kind::latency};
    CHECK_THROWS_WITH_AS(core::validate(lat), doctest::Contains("--rails-serial"), core::spec_error);
    lat.rails.resize(1);
    CHECK_NOTHROW(core::validate(lat));
    auto many = s;
    many.streams = 30;
    CHECK_THROWS_WITH_AS(core::validate(many), doctest::Contains("90 streams per direction"), core::spec_error);
    auto rdma = s;
    rdma.transport = "rdma";
    CHECK_NOTHROW(core::validate(rdma));  // each rail on the device of its own address
    rdma.gid_index = 3;
    CHECK_THROWS_WITH_AS(core::validate(rdma), doctest::Contains("leave out --gid-index"), core::spec_error);
    rdma.gid_index.reset();
    rdma.rdma_device = "mlx5_0";
    CHECK_THROWS_WITH_AS(core::validate(rdma), doctest::Contains("rails and rdma_device"), core::spec_error);
    // JSON round trip keeps the rails; a spec without them has no "rails" field.
    const auto back = core::run_spec_from_json(core::to_json(s));
    REQUIRE(back.rails.size() == 3);
    CHECK(back.rails[1].peer_address == "10.60.1.2");
    s.rails.clear();
    CHECK_FALSE(core::to_json(s).contains("rails"));
}

TEST_CASE("streams are split by rail, rail-major, and judged against the link rate") {
    std::vector<core::rail_pair> rails(2);
    rails[0] = {"r0", "q0", "10.0.0.1", "10.0.0.2", 10.0};
    rails[1] = {"r1", "q1", "10.0.1.1", "10.0.1.2", 10.0};
    // Two streams per rail: streams 0,1 are r0's, 2,3 r1's.
    const auto split = core::split_by_rail({{4.0, 5.0, 2.0, 2.5}}, rails, 2);
    REQUIRE(split.size() == 2);
    CHECK(split[0].gbit_per_s == doctest::Approx(9.0));
    CHECK(split[1].gbit_per_s == doctest::Approx(4.5));
    CHECK(*split[1].rate_fraction == doctest::Approx(0.45));
    CHECK_THROWS_AS(core::split_by_rail({{1.0, 2.0, 3.0}}, rails, 2), core::insane_figure);
    CHECK(core::rail_warnings(split, rails).empty());
    auto dead = split;
    dead[1].gbit_per_s = 0;
    const auto said = core::rail_warnings(dead, rails);
    REQUIRE(said.size() == 1);
    CHECK(said[0].find("rail r1: no bytes") == 0);
    CHECK(said[0].find("ip route get 10.0.1.2 from 10.0.1.1") != std::string::npos);

    core::run_result run;
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    p.flows.resize(1);
    p.rails = split;
    run.points.push_back(p);
    const auto v = core::rail_verdicts(run, 0.9);
    REQUIRE(v.size() == 2);
    CHECK(v[0].state == core::check_state::ok);
    CHECK(v[1].state == core::check_state::critical);
    CHECK(v[1].figure.rail == "r1");
    CHECK(v[1].reason.find("45% of the link") != std::string::npos);
    CHECK_THROWS_AS(core::rail_verdicts(run, 1.5), core::spec_error);
    // --min-gbit with --rails is each rail's floor: the slow rail is named, the fast one OK
    // (the aggregate, 13.5 Gbit/s, would have passed a 5 Gbit/s floor).
    const auto floor = core::rail_floor_verdicts(run, 5.0);
    REQUIRE(floor.size() == 2);
    CHECK(floor[0].state == core::check_state::ok);
    CHECK(floor[1].state == core::check_state::critical);
    CHECK(floor[1].figure.rail == "r1");
    CHECK(floor[1].reason == "below --min-gbit 5 (each rail's floor)");
    CHECK_THROWS_AS(core::rail_floor_verdicts(run, 0), core::spec_error);
    core::check_result r;
    r.target = {"b:7470", "tcp", "a:7470"};
    r.state = core::check_state::ok;
    core::figure_verdict path;
    path.figure = {core::figure_kind::bandwidth, 1 << 20, 13.5, ""};
    path.state = core::check_state::ok;
    r.figures.push_back(path);
    core::add_rail_verdicts(r, v);
    CHECK(r.state == core::check_state::critical);
    const auto line = core::nagios_line(r);
    CHECK(line.find("rail r1:") != std::string::npos);
    CHECK(line.find("rail r0: 9") != std::string::npos);
    CHECK(core::nagios_output(r).find("bw_gbit_r1=") != std::string::npos);

    // matrix --rails: the same rail named by both ends' hosts and rails.
    run.spec.rails = rails;
    bool unknown = false;
    auto problems = core::rail_link_problems(run, "h1:7470", "h2:7470", 0.9, unknown);
    REQUIRE(problems.size() == 1);
    CAPTURE(problems[0].text);
    CHECK(problems[0].text.find("h1:7470 rail r1 -> h2:7470 rail q1: 4.50 Gbit/s at 1 MiB, below 0.9 x link rate 10.0 = 9.00 Gbit/s (45% of the link)") == 0);
    CHECK_FALSE(unknown);
    // Without a fraction only a rail that moved nothing is a problem.
    CHECK(core::rail_link_problems(run, "h1:7470", "h2:7470", 0, unknown).empty());
    run.points[0].rails = dead;
    problems = core::rail_link_problems(run, "h1:7470", "h2:7470", 0, unknown);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].text.find("h1:7470 rail r1 -> h2:7470 rail q1: moved no bytes at 1 MiB") == 0);
    // A rail without a known rate: no problem, but said.
    run.points[0].rails = split;
    run.points[0].rails[1].rate_gbit.reset();
    CHECK(core::rail_link_problems(run, "h1:7470", "h2:7470", 0.9, unknown).empty());
    CHECK(unknown);
}

TEST_CASE("a spec's rails from hostile JSON are refused with a spec_error, never built or trusted") {
    const auto spec_with = [](json rails) {
        return json{{"peer", "10.0.0.2:7470"}, {"tests", {"bandwidth"}}, {"sizes", {65536}}, {"rails", std::move(rails)}};
    };
    const json good = {{"name", "ra0"}, {"peer_name", "rb0"}, {"local_address", "10.61.0.1"}, {"peer_address", "10.61.0.2"},
                       {"rate_gbit", 0.2}};
    CHECK_NOTHROW(core::run_spec_from_json(spec_with(json::array({good}))));
    auto bad = [&](json r) { return spec_with(json::array({std::move(r)})); };
    auto with = [&](const char* key, json v) {
        auto r = good;
        r[key] = std::move(v);
        return r;
    };
    CHECK_THROWS_AS(core::run_spec_from_json(spec_with("ra0")), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(42)), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("name", 7))), core::spec_error);
    // Names as Linux allows them (any bytes but '/', ':' and whitespace, 1..15): "ré" is one.
    CHECK_NOTHROW(core::run_spec_from_json(bad(with("name", "r\xc3\xa9"))));
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("name", "r/a"))), core::spec_error);  // a path, never a name
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("name", "r a"))), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("name", std::string(65, 'x')))), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("local_address", "ra0.example"))), core::spec_error);  // not an IP
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("rate_gbit", "fast"))), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("rate_gbit", -1))), core::spec_error);
    CHECK_THROWS_AS(core::run_spec_from_json(bad(with("extra", 1))), core::spec_error);
    // Oversized: refused by its count before any entry is parsed.
    CHECK_THROWS_WITH_AS(core::run_spec_from_json(spec_with(json(std::vector<json>(10000, good)))),
                         doctest::Contains("at most 16"), core::spec_error);
    // The same address twice.
    CHECK_THROWS_AS(core::run_spec_from_json(spec_with(json::array({good, with("name", "ra1")}))), core::spec_error);
}
