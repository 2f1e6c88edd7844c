// daemon/collective/wire: what a rank's report and the coordinator's point_begin may
// hold; a peer's JSON is not trusted.
#include "daemon/collective/wire.hpp"
#include "core/counter_sources.hpp"

#include "daemon/session/frame_channel.hpp"

#include <doctest/doctest.h>
#include <limits>

namespace collective_wire_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

TEST_CASE("a rank's report reads back, and a malformed one is refused") {
    daemon::rank_timing t;
    t.iteration_s = {0.002, 0.0021};
    t.link_in_s = {0.001, 0.0011};
    t.wrong = 0;
    const auto back = daemon::rank_timing_from_json(daemon::to_json(t), 100, true);
    CHECK(back.iteration_s == t.iteration_s);
    CHECK(back.link_in_s == t.link_in_s);
    CHECK(back.wrong == std::optional<std::uint64_t>{0});
    CHECK_FALSE(daemon::rank_timing_from_json(daemon::to_json(t), 100, false).wrong);

    auto bad = [&](json j) { CHECK_THROWS_AS(daemon::rank_timing_from_json(j, 100, true), daemon::session_error); };
    bad(json::array());
    bad({{"iteration_s", json::array()}, {"link_in_s", json::array()}, {"wrong", 0}});  // no iteration
    bad({{"iteration_s", {0.1, -1.0}}, {"link_in_s", json::array()}, {"wrong", 0}});
    bad({{"iteration_s", {0.1, "x"}}, {"link_in_s", json::array()}, {"wrong", 0}});
    bad({{"iteration_s", {0.1}}, {"link_in_s", {0.1, 0.1}}, {"wrong", 0}});  // send times of other iterations
    bad({{"iteration_s", {0.1}}, {"link_in_s", json::array()}});             // verify asked, no count
    bad({{"iteration_s", {0.1}}, {"link_in_s", json::array()}, {"wrong", -3}});
    bad({{"iteration_s", json(std::vector<double>(101, 0.1))}, {"link_in_s", json::array()}, {"wrong", 0}});  // over the cap
    json inf = {{"iteration_s", {0.1}}, {"link_in_s", json::array()}, {"wrong", 0}};
    inf["iteration_s"][0] = std::numeric_limits<double>::infinity();  // dumps as null
    bad(json::parse(inf.dump()));
}

TEST_CASE("a rank's NIC counters travel in its report; malformed ones are refused, absent ones stay absent") {
    daemon::rank_timing t;
    t.iteration_s = {0.5, 0.25};
    core::link_side_counters c;
    c.window_s = 0.75;
    c.sources.push_back(core::nic_source("eth1", core::counter_delta({{"carrier_changes", 1}, {"tx_bytes", 10}},
                                                          {{"carrier_changes", 3}, {"tx_bytes", 4}})));
    t.link_counters = c;
    const auto back = daemon::rank_timing_from_json(daemon::to_json(t), 100, false);
    REQUIRE(back.link_counters);
    REQUIRE(back.link_counters->source("nic"));
    CHECK(back.link_counters->source("nic")->group("counters").delta("carrier_changes") == 2u);
    CHECK(back.link_counters->source("nic")->group("counters").resets == std::vector<std::string>{"tx_bytes"});
    t.link_counters.reset();
    CHECK_FALSE(daemon::rank_timing_from_json(daemon::to_json(t), 100, false).link_counters);
    auto j = daemon::to_json(t);
    j["link_counters"] = {{"window_s", -1.0}};
    CHECK_THROWS_AS(daemon::rank_timing_from_json(j, 100, false), daemon::session_error);
    j["link_counters"] = {{"window_s", 1.0}, {"nic", {{"interface", "eth 1"}, {"counters", {{"deltas", json::object()}}}}}};
    CHECK_THROWS_AS(daemon::rank_timing_from_json(j, 100, false), daemon::session_error);
}

TEST_CASE("a rank's send_tcp counters travel in its report; malformed ones are refused naming the field") {
    daemon::rank_timing t;
    t.iteration_s = {0.5, 0.25};
    core::tcp_point_counters c;
    c.retransmits = 3;
    c.segments_sent = 1200;
    c.rtt_us = {40, 90};
    c.cwnd = {10, 64};
    c.rtt_median_us = 50;
    t.send_tcp = c;
    const auto j = daemon::to_json(t);
    CHECK(j["send_tcp"]["segments_sent"] == 1200);
    const auto back = daemon::rank_timing_from_json(j, 100, false);
    REQUIRE(back.send_tcp);
    CHECK(back.send_tcp->retransmits == 3u);
    CHECK(back.send_tcp->segments_sent == 1200u);
    CHECK(back.send_tcp->rtt_us.max == 90u);
    CHECK(back.send_tcp->rtt_median_us == std::optional<std::uint64_t>{50});

    t.send_tcp.reset();
    CHECK_FALSE(daemon::to_json(t).contains("send_tcp"));
    CHECK_FALSE(daemon::rank_timing_from_json(daemon::to_json(t), 100, false).send_tcp);
    auto nulled = daemon::to_json(t);
    nulled["send_tcp"] = nullptr;
    CHECK_FALSE(daemon::rank_timing_from_json(nulled, 100, false).send_tcp);

    auto bad = [&](json counters) {
        auto m = j;
        m["send_tcp"] = std::move(counters);
        try {
            (void)daemon::rank_timing_from_json(m, 100, false);
            FAIL("accepted");
        } catch (const daemon::session_error& e) {
            CHECK(std::string(e.what()).find("send_tcp") != std::string::npos);
        }
    };
    bad("many");
    bad({{"retransmits", 1}});  // no segments_sent
    auto more_retransmitted = j["send_tcp"];
    more_retransmitted["retransmits"] = 5000;  // more than were sent
    bad(more_retransmitted);
    auto negative = j["send_tcp"];
    negative["segments_sent"] = -1;
    bad(negative);
    auto inverted = j["send_tcp"];
    inverted["rtt_us"] = {{"min", 100}, {"max", 10}};
    bad(inverted);
}

TEST_CASE("point_begin names an op and a size of the agreed plan, or is refused") {
    core::collective_spec spec;
    spec.hosts = {"a:7470", "b:7470"};
    spec.ops = {core::collective_op::allreduce};
    spec.sizes = {1024, 4096};
    const daemon::collective_size_key k{core::collective_op::allreduce, 4096, 2};
    const auto back = daemon::collective_size_key_from_json(daemon::to_json(k), spec);
    CHECK(back.op == k.op);
    CHECK(back.size == 4096);
    CHECK(back.index == 2);
    CHECK(daemon::describe(k) == "allreduce 4 KiB");
    CHECK_THROWS_AS(daemon::collective_size_key_from_json({{"op", "alltoall"}, {"size", 4096}, {"index", 1}}, spec),
                    daemon::session_error);
    CHECK_THROWS_AS(daemon::collective_size_key_from_json({{"op", "allreduce"}, {"size", 2048}, {"index", 1}}, spec),
                    daemon::session_error);
    CHECK_THROWS_AS(daemon::collective_size_key_from_json({{"op", "allreduce"}, {"size", "big"}, {"index", 1}}, spec),
                    daemon::session_error);
    CHECK_THROWS_AS(daemon::collective_size_key_from_json(json::array(), spec), daemon::session_error);
    CHECK(daemon::rank_name(spec, 1) == "rank 1 (b:7470)");
    CHECK(daemon::new_mesh_token().size() == 32);
    CHECK(daemon::new_mesh_token() != daemon::new_mesh_token());
}

}  // namespace collective_wire_test
