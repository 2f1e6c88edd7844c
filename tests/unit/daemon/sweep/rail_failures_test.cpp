// daemon::point_rails: what TCP and RDMA share when a rail fails mid-point — which rails a
// point keeps, what point_begin and point_done say about failed rails, and when a point has
// no rail left and fails as a whole.
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/sweep/rail_failures.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rail_failures_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using daemon::session_error;
using nlohmann::json;
namespace pr = daemon::point_rails;

namespace {

core::run_spec three_rails() {
    core::run_spec s;
    s.tests = {core::test_kind::bandwidth};
    s.streams = 2;
    for (const char* n : {"ra0", "ra1", "ra2"}) s.rails.push_back({n, std::string("p") + n, "10.0.0.1", "10.0.0.2", 100});
    return s;
}

}  // namespace

TEST_SUITE("point_rails") {

TEST_CASE("a point's spec leaves out the dropped rails and keeps the others in order") {
    const auto run = three_rails();
    const auto point = pr::point_spec(run, {{"ra1", "it failed"}});
    REQUIRE(point.rails.size() == 2);
    CHECK(point.rails[0].name == "ra0");
    CHECK(point.rails[1].name == "ra2");
    CHECK(pr::point_spec(run, {}).rails.size() == 3);
}

TEST_CASE("only an adaptive or duration bandwidth or bidir point over two rails or more may lose a rail") {
    auto s = three_rails();
    CHECK(pr::tolerates_rail_failures(s, core::test_kind::bandwidth));
    CHECK(pr::tolerates_rail_failures(s, core::test_kind::bidir));
    CHECK_FALSE(pr::tolerates_rail_failures(s, core::test_kind::latency));
    s.rails.resize(1);
    CHECK_FALSE(pr::tolerates_rail_failures(s, core::test_kind::bandwidth));
    s = three_rails();
    s.iterations = 100;
    CHECK_FALSE(pr::tolerates_rail_failures(s, core::test_kind::bandwidth));
    // The peer tolerates only when the initiator asked for it.
    s = three_rails();
    CHECK(pr::tolerant_by_begin({{"rail_failures", true}}, s, core::test_kind::bandwidth));
    CHECK_FALSE(pr::tolerant_by_begin(json::object(), s, core::test_kind::bandwidth));
    CHECK_FALSE(pr::tolerant_by_begin({{"rail_failures", "yes"}}, s, core::test_kind::bandwidth));
    CHECK_FALSE(pr::tolerant_by_begin({{"rail_failures", true}}, s, core::test_kind::latency));
}

TEST_CASE("point_begin's rail fields: asked for, and the dropped rails by name, read back by the peer") {
    const auto run = three_rails();
    pr::run_rails rails;
    std::vector<std::string> warnings;
    rails.warnings = &warnings;
    json begin = json::object();
    rails.add_begin_fields(begin, false);
    CHECK(begin.empty());
    rails.drop({{"ra2", "RDMA failed at the initiator: work completion failed (status 12)"}}, 3, core::test_kind::bandwidth, 65536);
    REQUIRE(rails.dropped.size() == 1);
    CHECK(rails.dropped[0].error.find("not measured: it failed in point 3 (bandwidth 64 KiB)") == 0);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("rail ra2 failed in point 3") == 0);
    rails.add_begin_fields(begin, true);
    CHECK(begin.at("rail_failures") == true);
    CHECK(begin.at("rails_dropped") == json::array({"ra2"}));
    const auto dropped = pr::dropped_from_begin(begin, run);
    REQUIRE(dropped.size() == 1);
    CHECK(dropped[0].name == "ra2");
    // A peer refuses what names no rail of the run, or drops every rail.
    CHECK_THROWS_AS(pr::dropped_from_begin({{"rails_dropped", {"rz9"}}}, run), session_error);
    CHECK_THROWS_AS(pr::dropped_from_begin({{"rails_dropped", {"ra0", "ra1", "ra2"}}}, run), session_error);
    CHECK_THROWS_AS(pr::dropped_from_begin({{"rails_dropped", "ra0"}}, run), session_error);
}

TEST_CASE("the peer's failed rails are read only when well formed and naming the point's rails") {
    const auto s = three_rails();
    CHECK(pr::peer_rail_failures(json::object(), s).empty());
    const auto ok = pr::peer_rail_failures({{"failed_rails", pr::to_json({{"ra1", "RDMA failed at the peer: x"}})}}, s);
    REQUIRE(ok.size() == 1);
    CHECK(ok[0].name == "ra1");
    CHECK(ok[0].error == "RDMA failed at the peer: x");
    CHECK_THROWS_AS(pr::peer_rail_failures({{"failed_rails", {{{"name", "zz"}, {"error", "x"}}}}}, s), session_error);
    CHECK_THROWS_AS(pr::peer_rail_failures({{"failed_rails", {{{"name", "ra1"}}}}}, s), session_error);
    CHECK_THROWS_AS(pr::peer_rail_failures({{"failed_rails", 7}}, s), session_error);
}

TEST_CASE("a failed rail's streams are found rail-major, whatever the streams per rail") {
    const auto s = three_rails();
    // Six counting QPs, two a rail: rail ra1 holds the third and fourth.
    CHECK(pr::streams_on({{"ra1", "x"}}, s, 6, 2) == std::vector<bool>{false, false, true, true, false, false});
    // One a rail (a bidir direction of 1 stream): the second.
    CHECK(pr::streams_on({{"ra1", "x"}}, s, 3, 1) == std::vector<bool>{false, true, false});
    CHECK(pr::streams_on({}, s, 3, 1) == std::vector<bool>{false, false, false});
    CHECK(pr::streams_on({{"ra0", "x"}}, s, 3, 0) == std::vector<bool>{false, false, false});
}

TEST_CASE("a point keeps its failed rails while one rail works, and fails naming each when none does") {
    auto s = three_rails();
    CHECK(pr::with_a_survivor({}, s).empty());
    CHECK(pr::with_a_survivor({{"ra0", "a"}, {"ra2", "c"}}, s).size() == 2);
    try {
        pr::with_a_survivor({{"ra0", "a"}, {"ra1", "b"}, {"ra2", "c"}}, s);
        FAIL("a point without a working rail must fail");
    } catch (const session_error& e) {
        CHECK(std::string(e.what()) == "every rail of the point failed: rail ra0: a; rail ra1: b; rail ra2: c");
    }
}

TEST_CASE("a dropped rail that answers again is measured again, with a warning; one that does not stays out") {
    const auto run = three_rails();
    pr::run_rails rails;
    std::vector<std::string> warnings;
    rails.warnings = &warnings;
    rails.drop({{"ra1", "data stream failed"}, {"ra2", "data stream failed"}}, 1, core::test_kind::bandwidth, 65536);
    std::vector<std::string> asked;
    const auto back = rails.readmit(run, 3, core::test_kind::bandwidth, 1 << 20, [&](const core::rail_pair& r) {
        asked.push_back(r.name + " " + r.local_address + " -> " + r.peer_address);
        return r.name == "ra2";
    });
    CHECK(asked == std::vector<std::string>{"ra1 10.0.0.1 -> 10.0.0.2", "ra2 10.0.0.1 -> 10.0.0.2"});
    CHECK(back == std::vector<std::string>{"ra2"});
    REQUIRE(rails.dropped.size() == 1);
    CHECK(rails.dropped[0].name == "ra1");
    REQUIRE(warnings.size() == 3);
    CHECK(warnings[2] == "rail ra2 answered again before point 3 (bandwidth 1 MiB) and was measured again from there");
    CHECK(pr::point_spec(run, rails.dropped).rails.size() == 2);
    // Nothing dropped: nothing asked.
    pr::run_rails none;
    CHECK(none.readmit(run, 2, core::test_kind::bandwidth, 1, [](const core::rail_pair&) -> bool { FAIL("asked"); return true; }).empty());
}

}  // TEST_SUITE

}  // namespace rail_failures_test
