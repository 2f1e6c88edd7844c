// daemon/sweep/point_link_counters: the counters one end puts in its point_done and the
// initiator reads back (the path's, and one entry or null per rail), malformed ones refused
// naming the field, and each rail's counters attached to the point under its name with the
// warnings they give.
#include "daemon/sweep/point_link_counters.hpp"
#include "core/counter_sources.hpp"

#include "daemon/session/frame_channel.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace point_link_counters_test {  // one per test file: the unit tests are built in batches (unity build)

namespace md = meshperf::daemon;
namespace core = meshperf::core;

namespace {

core::link_side_counters nic(std::string interface, core::counter_values before, core::counter_values after) {
    core::link_side_counters s;
    s.window_s = 1;
    s.sources.push_back(core::nic_source(std::move(interface), core::counter_delta(before, after)));
    return s;
}

}  // namespace

TEST_CASE("point_done carries each rail's counters; the initiator reads them back and names them by rail") {
    md::end_link_counters peer;
    peer.rails = {nic("rb0", {{"rx_bytes", 0}}, {{"rx_bytes", 5000}}), std::nullopt,
                  nic("rb2", {{"carrier_changes", 1}}, {{"carrier_changes", 3}})};
    nlohmann::json done = nlohmann::json::object();
    md::add_link_counters(done, peer);
    CHECK_FALSE(done.contains("link_counters"));
    REQUIRE(done["rail_link_counters"].size() == 3);
    CHECK(done["rail_link_counters"][1].is_null());

    auto back = md::peer_link_counters(done, 3);
    CHECK_FALSE(back.path);
    REQUIRE(back.rails.size() == 3);
    CHECK(back.rails[0]->source("nic")->group("counters").delta("rx_bytes") == 5000u);
    CHECK_FALSE(back.rails[1]);
    // A list that does not match the run's rails, or a malformed entry: the peer is wrong.
    CHECK_THROWS_AS(md::peer_link_counters(done, 2), md::session_error);
    auto bad = done;
    bad["rail_link_counters"][0]["window_s"] = "soon";
    CHECK_THROWS_AS(md::peer_link_counters(bad, 3), md::session_error);
    // A peer that sends none (older, or nothing readable): no counters, no error.
    CHECK(md::peer_link_counters(nlohmann::json::object(), 3).rails.empty());

    std::vector<core::rail_pair> rails(3);
    rails[0] = {"ra0", "rb0", "10.0.0.1", "10.0.0.2", std::nullopt};
    rails[1] = {"ra1", "rb1", "10.0.1.1", "10.0.1.2", std::nullopt};
    rails[2] = {"ra2", "rb2", "10.0.2.1", "10.0.2.2", std::nullopt};
    md::end_link_counters here;
    here.rails = {nic("ra0", {{"tx_bytes", 0}}, {{"tx_bytes", 5100}}), std::nullopt, std::nullopt};
    core::point_result point;
    point.test = core::test_kind::bandwidth;
    point.size_bytes = 65536;
    md::attach_link_counters(point, here, back, rails);
    CHECK(point.link.empty());  // the session NIC's: none over rails
    REQUIRE(point.rail_links.size() == 2);  // ra1: neither end could read it
    CHECK(point.rail_links[0].rail == "ra0");
    CHECK(point.rail_links[0].link.initiator->source("nic")->device == "ra0");
    CHECK(point.rail_links[1].rail == "ra2");
    CHECK_FALSE(point.rail_links[1].link.initiator);
    REQUIRE(point.warnings.size() == 1);
    CHECK(point.warnings[0] == "peer rb2: 2 carrier_changes (the link went down and up) during the 64 KiB bandwidth point");
}

}  // namespace point_link_counters_test
