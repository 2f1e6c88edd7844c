// Thread placement: the CPU choice, the JSON of a point's placement, the words for it, the
// --cpu option and the spec's CPU fields (core/placement.hpp, core/placement_summary.hpp).
#include "core/error.hpp"
#include "core/placement.hpp"
#include "core/placement_summary.hpp"
#include "core/result.hpp"
#include "core/run_spec.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace placement_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using nlohmann::json;

namespace {

std::map<int, int> two_nodes_of_four() { return {{0, 0}, {1, 0}, {2, 1}, {3, 1}}; }

side_placement side(std::vector<int> cpus, std::vector<int> nodes, bool pinned = true, cpu_source src = cpu_source::automatic) {
    return {std::move(cpus), std::move(nodes), pinned, pinned ? src : cpu_source::none};
}

point_result latency_point(std::uint64_t size, std::optional<point_placement> where) {
    point_result p;
    p.test = test_kind::latency;
    p.size_bytes = size;
    p.placement = std::move(where);
    return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("choose_cpus: the first allowed CPUs, one per thread, at most what is allowed") {
    CHECK(choose_cpus({.allowed = {3, 1, 2}}) == std::vector<int>{1});
    CHECK(choose_cpus({.allowed = {0, 1, 2, 3}, .threads = 2}) == std::vector<int>{0, 1});
    CHECK(choose_cpus({.allowed = {0, 1}, .threads = 8}) == std::vector<int>{0, 1});
    CHECK(choose_cpus({.allowed = {}}).empty());
    CHECK(choose_cpus({.allowed = {5}, .threads = 0}) == std::vector<int>{5});  // at least one
}

TEST_CASE("choose_cpus: near the NIC's NUMA node when it is known") {
    CHECK(choose_cpus({.allowed = {0, 1, 2, 3}, .numa_node_of = two_nodes_of_four(), .nic_node = 1}) == std::vector<int>{2});
    CHECK(choose_cpus({.allowed = {0, 1, 2, 3}, .numa_node_of = two_nodes_of_four(), .nic_node = 1, .threads = 4}) ==
          std::vector<int>{2, 3});  // streams share the node's CPUs rather than leave it
    // The daemon may not use the NIC's node (taskset): any allowed CPU.
    CHECK(choose_cpus({.allowed = {0, 1}, .numa_node_of = two_nodes_of_four(), .nic_node = 1}) == std::vector<int>{0});
    // A node no CPU is on, or CPUs without a known node.
    CHECK(choose_cpus({.allowed = {0, 1}, .numa_node_of = {}, .nic_node = 0}) == std::vector<int>{0});
}

TEST_CASE("choose_cpus: on one host, away from the other side's CPUs") {
    // Two CPUs: the initiator takes 0, the peer 1.
    const auto initiator = choose_cpus({.allowed = {0, 1}});
    CHECK(initiator == std::vector<int>{0});
    CHECK(choose_cpus({.allowed = {0, 1}, .other_side = initiator}) == std::vector<int>{1});
    // The initiator restricted to CPU 0 (taskset): the peer still goes to 1.
    CHECK(choose_cpus({.allowed = {0, 1}, .other_side = {0}}) == std::vector<int>{1});
    // Only one usable CPU: both share it.
    CHECK(choose_cpus({.allowed = {0}, .other_side = {0}}) == std::vector<int>{0});
    // Off the NIC's node rather than onto the other side's CPU.
    CHECK(choose_cpus({.allowed = {0, 1, 2, 3}, .numa_node_of = {{0, 0}, {1, 1}, {2, 1}, {3, 1}}, .nic_node = 0,
                       .other_side = {0}}) == std::vector<int>{1});
}

TEST_CASE("choose_cpus: multi-stream sides on one host split the CPUs between them") {
    // The initiator took every CPU for its 4 streams; the peer takes the upper half...
    const auto first = choose_cpus({.allowed = {0, 1, 2, 3}, .threads = 4});
    CHECK(first == std::vector<int>{0, 1, 2, 3});
    const auto peer = choose_cpus({.allowed = {0, 1, 2, 3}, .other_side = first, .threads = 4});
    CHECK(peer == std::vector<int>{2, 3});
    // ...and the initiator, choosing again with the peer's, the lower half: disjoint.
    CHECK(choose_cpus({.allowed = {0, 1, 2, 3}, .other_side = peer, .threads = 4}) == std::vector<int>{0, 1});
    // Two CPUs, two streams each: one CPU per side.
    const auto p2 = choose_cpus({.allowed = {0, 1}, .other_side = {0, 1}, .threads = 2});
    CHECK(p2 == std::vector<int>{1});
    CHECK(choose_cpus({.allowed = {0, 1}, .other_side = p2, .threads = 2}) == std::vector<int>{0});
}

TEST_CASE("point placement: shared_cpu is derived on one host only") {
    auto p = make_point_placement(side({0}, {0}), side({1}, {0}), true);
    CHECK(p.shared_cpu == false);
    p = make_point_placement(side({0}, {0}), side({0}, {0}), true);
    CHECK(p.shared_cpu == true);
    p = make_point_placement(side({0}, {0}), side({0}, {0}), false);  // CPU 0 of two hosts is two CPUs
    CHECK_FALSE(p.shared_cpu.has_value());
    p = make_point_placement(side({0}, {0}), std::nullopt, true);     // an older peer said nothing
    CHECK_FALSE(p.shared_cpu.has_value());
    p = make_point_placement(side({0}, {0}), side({0}, {0}), std::nullopt);
    CHECK_FALSE(p.shared_cpu.has_value());
}

TEST_CASE("placement JSON round trips, with unknown parts as null") {
    for (const auto& p : {make_point_placement(side({0}, {0}), side({1}, {0}, true, cpu_source::spec), true),
                          make_point_placement(side({0, 1}, {}, false), side({3}, {1}), false),
                          make_point_placement(side({2}, {0}), std::nullopt, std::nullopt),
                          make_point_placement(side({1}, {0}), side({1}, {0}), true)}) {
        const auto j = to_json(p);
        CHECK(point_placement_from_json(j) == p);
        CHECK(point_placement_from_json(json::parse(j.dump())) == p);
    }
    const auto j = to_json(make_point_placement(side({2}, {0}), std::nullopt, std::nullopt));
    CHECK(j["peer"].is_null());
    CHECK(j["same_host"].is_null());
    CHECK(j["shared_cpu"].is_null());
    CHECK(j["initiator"]["pinned_by"] == "default");
    CHECK(to_json(side({1}, {}, false))["pinned_by"] == "none");
}

TEST_CASE("placement JSON from a peer: wrong types and absurd values are refused") {
    CHECK_THROWS_AS(side_placement_from_json(json{{"cpus", "0"}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json{{"cpus", {-1}}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json{{"cpus", {1e12}}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json{{"cpus", json(std::vector<int>(9000, 1))}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json{{"pinned", "yes"}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json{{"pinned_by", "magic"}}), spec_error);
    CHECK_THROWS_AS(side_placement_from_json(json::array()), spec_error);
    CHECK_THROWS_AS(point_placement_from_json(json{{"same_host", 1}}), spec_error);
    // Unordered, repeated CPUs are normalised.
    CHECK(side_placement_from_json(json{{"cpus", {3, 1, 3}}}).cpus == std::vector<int>{1, 3});
}

TEST_CASE("a point result keeps its placement through JSON; older results have none") {
    auto p = latency_point(64, make_point_placement(side({0}, {0}), side({1}, {0}), true));
    const auto back = point_result_from_json(to_json(p));
    REQUIRE(back.placement);
    CHECK(*back.placement == *p.placement);
    auto old = to_json(p);
    old.erase("placement");
    CHECK_FALSE(point_result_from_json(old).placement.has_value());
    CHECK_FALSE(to_json(latency_point(64, std::nullopt)).contains("placement"));
}

TEST_CASE("placement in words") {
    CHECK(format_cpu_list({0}) == "0");
    CHECK(format_cpu_list({3, 0, 1, 2, 7, 9, 8}) == "0-3,7-9");
    CHECK(format_cpu_list({}) == "");
    CHECK(describe(make_point_placement(side({0}, {0}), side({1}, {0}), true)) ==
          "initiator CPU 0 (NUMA 0), peer CPU 1 (NUMA 0), separate CPUs on one host");
    CHECK(describe(make_point_placement(side({0}, {0}), side({0}, {0}), true)) ==
          "initiator CPU 0 (NUMA 0), peer CPU 0 (NUMA 0), sharing CPU 0 on one host");
    CHECK(describe(make_point_placement(side({0, 1}, {}, false), side({2, 3}, {0, 1}), false)) ==
          "initiator CPUs 0-1 (not pinned), peer CPUs 2-3 (NUMA 0-1), on different hosts");
    CHECK(contains(describe(make_point_placement(side({0}, {0}), std::nullopt, std::nullopt)), "peer unknown"));
    CHECK(contains(describe(make_point_placement(side({0}, {0}), side({1}, {0}), std::nullopt)), "hosts not compared"));
}

TEST_CASE("--cpu: A,B is initiator A and peer B; A is both on A") {
    auto o = parse_cpu_option("0,1");
    CHECK(o.initiator == std::vector<int>{0});
    CHECK(o.peer == std::vector<int>{1});
    o = parse_cpu_option("2");
    CHECK(o.initiator == std::vector<int>{2});
    CHECK(o.peer == std::vector<int>{2});
    o = parse_cpu_option("0-1,2-3");
    CHECK(o.initiator == std::vector<int>{0, 1});
    CHECK(o.peer == std::vector<int>{2, 3});
    CHECK_THROWS_WITH_AS(parse_cpu_option("0,1,2"), doctest::Contains("more than two sides"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_option("0,"), doctest::Contains("empty side"), spec_error);
    CHECK_THROWS_WITH_AS(parse_cpu_option(""), doctest::Contains("--cpu A,B"), spec_error);
    CHECK_THROWS_AS(parse_cpu_option("x"), spec_error);
}

TEST_CASE("run spec: initiator_cpus and peer_cpus; the older cpus keeps its meaning") {
    auto s = run_spec_from_json(json{{"peer", "n:1"}, {"initiator_cpus", {0}}, {"peer_cpus", "1"}});
    CHECK(cpus_for_side(s, true) == std::vector<int>{0});
    CHECK(cpus_for_side(s, false) == std::vector<int>{1});
    const auto j = to_json(s);
    CHECK(j["initiator_cpus"] == json{0});
    CHECK(j["peer_cpus"] == json{1});
    CHECK(run_spec_from_json(j).peer_cpus == std::vector<int>{1});

    // An older client's cpus: both sides, round-robin over the same list.
    s = run_spec_from_json(json{{"peer", "n:1"}, {"cpus", {2, 3}}});
    CHECK(cpus_for_side(s, true) == std::vector<int>{2, 3});
    CHECK(cpus_for_side(s, false) == std::vector<int>{2, 3});
    // Without the new fields, the spec a peer receives carries none of them (an older peer
    // refuses fields it does not know).
    CHECK_FALSE(to_json(s).contains("initiator_cpus"));
    CHECK_FALSE(to_json(s).contains("peer_cpus"));

    CHECK_THROWS_WITH_AS(run_spec_from_json(json{{"peer", "n:1"}, {"cpus", {0}}, {"peer_cpus", {1}}}),
                         doctest::Contains("give one form"), spec_error);
    CHECK_THROWS_WITH_AS(run_spec_from_json(json{{"peer", "n:1"}, {"peer_cpus", {70000}}}), doctest::Contains("peer_cpus"),
                         spec_error);
    CHECK_THROWS_WITH_AS(run_spec_from_json(json{{"peer", "n:1"}, {"initiator_cpus", {4294967295u}}}),
                         doctest::Contains("initiator_cpus"), spec_error);
    CHECK_THROWS_WITH_AS(run_spec_from_json(json{{"peer", "n:1"}, {"initiator_cpus", true}}),
                         doctest::Contains("'initiator_cpus'"), spec_error);
}

TEST_CASE("the spec a peer receives: its own CPUs in the older field every meshperfd reads") {
    auto s = run_spec_from_json(json{{"peer", "n:1"}, {"initiator_cpus", {0}}, {"peer_cpus", {1}}});
    auto j = to_json(spec_for_peer(s));
    CHECK(j["cpus"] == json{1});
    CHECK_FALSE(j.contains("initiator_cpus"));
    CHECK_FALSE(j.contains("peer_cpus"));
    CHECK(cpus_for_side(run_spec_from_json(j), false) == std::vector<int>{1});
    // Only the initiator pinned: the peer chooses.
    s = run_spec_from_json(json{{"peer", "n:1"}, {"initiator_cpus", {0}}});
    CHECK(to_json(spec_for_peer(s))["cpus"].empty());
    // The older form passes unchanged.
    s = run_spec_from_json(json{{"peer", "n:1"}, {"cpus", {2, 3}}});
    CHECK(to_json(spec_for_peer(s)) == to_json(s));
}

TEST_CASE("placement warnings: a change within a sweep, and spinning sides on one CPU") {
    run_result run;
    run.spec.peer = "n:1";
    run.spec.tests = {test_kind::latency};
    const auto apart = make_point_placement(side({0}, {0}, false), side({1}, {0}, false), true);
    const auto together = make_point_placement(side({1}, {0}, false), side({1}, {0}, false), true);
    run.points = {latency_point(1, apart), latency_point(2, apart)};
    CHECK(placement_warnings(run).empty());
    CHECK(placement_lines(run) ==
          std::vector<std::string>{"placement: initiator CPU 0 (not pinned; NUMA 0), peer CPU 1 (not pinned; NUMA 0), separate "
                                   "CPUs on one host"});

    run.points.push_back(latency_point(4, together));
    auto w = placement_warnings(run);
    REQUIRE(w.size() == 1);
    CHECK(contains(w[0], "placement changed within the latency sweep"));
    CHECK(contains(w[0], "at 1 B, 2 B"));
    CHECK(contains(w[0], "sharing CPU 1 on one host at 4 B"));
    REQUIRE(placement_lines(run).size() == 1);
    CHECK(contains(placement_lines(run)[0], "changed within the sweep"));

    // Busy-poll with a shared CPU says what the figures then mean.
    run.spec.busy_poll = true;
    w = placement_warnings(run);
    REQUIRE(w.size() == 2);
    CHECK(contains(w[1], "busy-poll with both sides on CPU 1 of one host (latency at 4 B)"));
    run.points = {latency_point(1, apart)};
    CHECK(placement_warnings(run).empty());

    // Results of older daemons: no placement, nothing to say.
    run.points = {latency_point(1, std::nullopt)};
    CHECK(placement_warnings(run).empty());
    CHECK(placement_lines(run).empty());
}

TEST_CASE("placement lines: one per test kind when the kinds ran on different CPUs") {
    run_result run;
    run.spec.tests = {test_kind::latency, test_kind::bandwidth};
    run.points = {latency_point(1, make_point_placement(side({0}, {0}), side({1}, {0}), true))};
    point_result bw;
    bw.test = test_kind::bandwidth;
    bw.size_bytes = 1;
    bw.placement = make_point_placement(side({0, 1}, {0}), side({2, 3}, {0}), true);
    run.points.push_back(bw);
    const auto lines = placement_lines(run);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].rfind("placement (latency): initiator CPU 0", 0) == 0);
    CHECK(lines[1].rfind("placement (bandwidth): initiator CPUs 0-1", 0) == 0);
    CHECK(placement_warnings(run).empty());  // different kinds, each steady
}

}  // namespace placement_test
