// core/link_counters and core/counter_verdicts: deltas of NIC and RDMA port counters (with
// mlx5's names), resets and saturation caught, the documented verdicts (link_downed
// CRITICAL, symbol_error above 120/hour WARNING, congestion marks evidence only), the
// point's warnings and the JSON of a point that carries them.
#include "core/check_figures.hpp"
#include "core/counter_verdicts.hpp"
#include "core/error.hpp"
#include "core/counter_sources.hpp"
#include "core/link_counters.hpp"
#include "core/result.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace link_counters_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// An mlx5 port's counters as sysfs shows them, before a point.
counter_values mlx5_port_before() {
    return {{"symbol_error", 5},          {"link_downed", 1},      {"link_error_recovery", 0},
            {"port_rcv_errors", 0},       {"port_xmit_discards", 3}, {"port_xmit_data", 1000},
            {"port_rcv_data", 2000},      {"port_xmit_wait", 10},  {"local_link_integrity_errors", 0},
            {"excessive_buffer_overrun_errors", 0}};
}

counter_values mlx5_hw_before() {
    return {{"out_of_sequence", 0}, {"packet_seq_err", 0}, {"np_cnp_sent", 4}, {"rp_cnp_handled", 4},
            {"np_ecn_marked_roce_packets", 9}, {"local_ack_timeout_err", 0}};
}

link_side_counters rdma_side(counter_values port_after, counter_values hw_after, double window_s = 2.0) {
    link_side_counters s;
    s.window_s = window_s;
    s.sources.push_back(rdma_port_source("mlx5_0", 1, counter_delta(mlx5_port_before(), port_after, ib_counter_maximum),
                                counter_delta(mlx5_hw_before(), hw_after)));
    return s;
}

}  // namespace

TEST_CASE("counter_delta: deltas of counters read twice; a counter that went down is a reset, not a huge delta") {
    const counter_values before{{"rx_bytes", 100}, {"tx_bytes", 4'000'000'000}, {"rx_dropped", 2}, {"gone", 1}};
    const counter_values after{{"rx_bytes", 250}, {"tx_bytes", 12}, {"rx_dropped", 2}, {"new", 7}};
    const auto d = counter_delta(before, after);
    CHECK(d.delta("rx_bytes") == 150u);
    CHECK(d.delta("rx_dropped") == 0u);
    CHECK_FALSE(d.delta("tx_bytes"));  // wrapped or reset: no delta
    CHECK(d.resets == std::vector<std::string>{"tx_bytes"});
    CHECK_FALSE(d.delta("gone"));  // read once only: absent, not zero
    CHECK_FALSE(d.delta("new"));
    CHECK(d.saturated.empty());
}

TEST_CASE("counter_delta: an InfiniBand counter at its width's maximum is saturated, its delta a lower bound") {
    CHECK(ib_counter_maximum("symbol_error") == 65535u);
    CHECK(ib_counter_maximum("link_downed") == 255u);
    CHECK(ib_counter_maximum("local_link_integrity_errors") == 15u);
    CHECK_FALSE(ib_counter_maximum("out_of_sequence"));
    auto after = mlx5_port_before();
    after["symbol_error"] = 65535;
    after["link_downed"] = 1;
    const auto d = counter_delta(mlx5_port_before(), after, ib_counter_maximum);
    CHECK(d.delta("symbol_error") == 65530u);
    CHECK(d.saturated == std::vector<std::string>{"symbol_error"});
    const auto findings = judge_link_counters({rdma_side(after, mlx5_hw_before()), std::nullopt});
    REQUIRE(findings.size() == 1);
    CHECK(has(findings[0].reason, "at least 65530 symbol_error"));
}

TEST_CASE("verdicts on mlx5 counters: link_downed CRITICAL, symbol errors above 120/hour WARNING, congestion evidence only") {
    auto port = mlx5_port_before();
    port["symbol_error"] += 37;
    port["link_downed"] += 2;
    port["port_xmit_data"] += 1'000'000;
    port["port_xmit_wait"] += 500;
    auto hw = mlx5_hw_before();
    hw["np_cnp_sent"] += 100;
    hw["np_ecn_marked_roce_packets"] += 100;
    hw["out_of_sequence"] += 3;
    const link_counters c{std::nullopt, rdma_side(port, hw)};
    const auto findings = judge_link_counters(c);
    REQUIRE(findings.size() == 3);
    CHECK(findings[0].counter == "link_downed");
    CHECK(findings[0].state == check_state::critical);
    CHECK(findings[0].side == "peer");
    CHECK(findings[0].where == "mlx5_0 port 1");
    CHECK(findings[0].delta == 2);
    CHECK(findings[1].state == check_state::warning);
    CHECK(findings[2].state == check_state::warning);
    const auto symbol = findings[1].counter == "symbol_error" ? findings[1] : findings[2];
    CHECK(symbol.counter == "symbol_error");
    CHECK(has(symbol.reason, "66600/hour"));  // 37 in 2 s
    CHECK(meaning_of("np_cnp_sent") == counter_meaning::congestion);
    CHECK(meaning_of("port_xmit_data") == counter_meaning::traffic);
    CHECK(meaning_of("some_new_driver_counter") == counter_meaning::traffic);

    const auto warnings = link_counter_warnings(c, "1 MiB bandwidth", 0, 0);
    REQUIRE(warnings.size() == 1);
    CHECK(has(warnings[0], "peer mlx5_0 port 1: 2 link_downed"));
    CHECK(has(warnings[0], "37 symbol_error"));
    CHECK(has(warnings[0], "during the 1 MiB bandwidth point"));
}

TEST_CASE("symbol errors at a rate under the IBTA bound give no verdict; one error in a short point does") {
    auto port = mlx5_port_before();
    port["symbol_error"] += 1;
    CHECK(judge_link_counters({rdma_side(port, mlx5_hw_before(), 20.0), std::nullopt}).size() == 1);  // 180/hour
    CHECK(judge_link_counters({rdma_side(port, mlx5_hw_before(), 30.0), std::nullopt}).empty());      // exactly 120/hour
    CHECK(judge_link_counters({rdma_side(port, mlx5_hw_before(), 3600.0), std::nullopt}).empty());    // 1/hour
    counter_thresholds loose;
    loose.symbol_errors_per_hour = 100'000;
    CHECK(judge_link_counters({rdma_side(port, mlx5_hw_before(), 2.0), std::nullopt}, loose).empty());  // 1800/hour
}

TEST_CASE("a reset is reported as a reset, and a NIC that carried less than the point moved is named") {
    link_side_counters nic;
    nic.window_s = 1.0;
    nic.sources.push_back(nic_source("eth1", counter_delta({{"tx_bytes", 5'000'000}, {"carrier_changes", 4}, {"rx_crc_errors", 9}},
                                                 {{"tx_bytes", 5'001'000}, {"carrier_changes", 6}, {"rx_crc_errors", 1}})));
    const auto warnings = link_counter_warnings({nic, std::nullopt}, "64 KiB bandwidth", 1'000'000, 0);
    REQUIRE(warnings.size() == 3);
    CHECK(has(warnings[0], "initiator eth1: 2 carrier_changes (the link went down and up)"));
    CHECK(has(warnings[1], "rx_crc_errors went backwards"));
    CHECK(has(warnings[2], "1000 bytes sent while the point moved 1000000"));
    const auto findings = judge_link_counters({nic, std::nullopt});
    REQUIRE(findings.size() == 1);  // the reset counter gives no verdict
    CHECK(findings[0].counter == "carrier_changes");
}

TEST_CASE("TCP retransmit thresholds: WARNING above 1%, CRITICAL above 5%, validated") {
    tcp_point_counters t;
    t.segments_sent = 1000;
    t.retransmits = 10;
    CHECK_FALSE(judge_tcp_counters(t));  // exactly 1%: OK (strict)
    t.retransmits = 11;
    REQUIRE(judge_tcp_counters(t));
    CHECK(judge_tcp_counters(t)->state == check_state::warning);
    t.retransmits = 51;
    CHECK(judge_tcp_counters(t)->state == check_state::critical);
    CHECK(has(judge_tcp_counters(t)->reason, "51 of 1000 segments retransmitted (5.10%"));
    counter_thresholds bad;
    bad.retransmit_warn_share = 0.2;
    bad.retransmit_crit_share = 0.1;
    CHECK_THROWS_AS(validate(bad), spec_error);
    bad = {};
    bad.symbol_errors_per_hour = 0;
    CHECK_THROWS_AS(validate(bad), spec_error);
    CHECK_NOTHROW(validate(counter_thresholds{}));
}

TEST_CASE("a point's link counters survive the result JSON; malformed ones are refused") {
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    auto port = mlx5_port_before();
    port["link_downed"] += 1;
    p.link.peer = rdma_side(port, mlx5_hw_before());
    link_side_counters nic;
    nic.window_s = 0.5;
    nic.sources.push_back(nic_source("veth0", counter_delta({{"tx_bytes", 1}}, {{"tx_bytes", 9}})));
    p.link.initiator = nic;
    const auto j = to_json(p);
    CHECK(j["counters"]["link"]["initiator"]["nic"]["interface"] == "veth0");
    CHECK(j["counters"]["link"]["initiator"]["nic"]["counters"]["deltas"]["tx_bytes"] == 8);
    CHECK(j["counters"]["link"]["peer"]["rdma"]["counters"]["deltas"]["link_downed"] == 1);
    const auto back = point_result_from_json(j);
    REQUIRE(back.link.peer);
    REQUIRE(back.link.peer->source("rdma"));
    CHECK(back.link.peer->source("rdma")->group("counters").delta("link_downed") == 1u);
    CHECK(back.link.initiator->source("nic")->group("counters").delta("tx_bytes") == 8u);
    auto broken = j;
    broken["counters"]["link"]["peer"]["rdma"]["counters"]["deltas"]["link_downed"] = -1;
    CHECK_THROWS_AS(point_result_from_json(broken), spec_error);
    link_side_counters zero_window = nic;
    zero_window.window_s = 0;
    CHECK_THROWS_AS(check_sane(zero_window), insane_figure);
}

TEST_CASE("check: a fast link whose counters moved is WARNING or CRITICAL, the Nagios line naming the counter") {
    run_result run;
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    p.gbit_per_s = 9.4;
    tcp_point_counters tcp;
    tcp.segments_sent = 1000;
    tcp.retransmits = 2;  // 0.2%: fine
    p.tcp_counters = tcp;
    link_side_counters nic;
    nic.window_s = 1.5;
    nic.sources.push_back(nic_source("veth1", counter_delta({{"carrier_changes", 3}}, {{"carrier_changes", 5}})));
    p.link.peer = nic;
    run.points.push_back(p);

    const check_figure fast{figure_kind::bandwidth, 1 << 20, 9.4};
    check_limits limits;
    limits.min_gbit = 1.0;
    auto r = evaluate_check({"node2:7470", "tcp", ""}, std::span(&fast, 1), limits);
    CHECK(r.state == check_state::ok);
    add_counter_verdicts(r, counter_verdicts_of(run));
    CHECK(r.state == check_state::warning);
    REQUIRE(r.counters.size() == 1);
    const auto line = nagios_line(r);
    CHECK(has(line, "MESHPERF WARNING"));
    CHECK(has(line, "peer veth1: 2 carrier_changes (the link went down and up) at 1 MiB bandwidth (WARNING)"));
    CHECK(has(line, "peer_veth1_carrier_changes_bandwidth_1M=2;;;0;"));
    CHECK(to_json(r)["counters"][0]["state"] == "WARNING");

    run.points[0].tcp_counters->retransmits = 60;  // 6%: above the 5% of CRITICAL
    auto r2 = evaluate_check({"node2:7470", "tcp", ""}, std::span(&fast, 1), limits);
    add_counter_verdicts(r2, counter_verdicts_of(run));
    CHECK(r2.state == check_state::critical);
    CHECK(r2.counters.front().state == check_state::critical);  // worst first
    CHECK(has(nagios_line(r2), "TCP retransmits: 60 of 1000 segments retransmitted"));

    auto unknown = unknown_result({"node2:7470", "tcp", ""}, "peer unreachable");
    add_counter_verdicts(unknown, counter_verdicts_of(run));
    CHECK(unknown.state == check_state::unknown);  // no figures: the check was not made
    CHECK(unknown.counters.empty());
}

TEST_CASE("a run over rails: each rail's NIC counters survive the JSON, and check names the rail") {
    run_result run;
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    p.gbit_per_s = 9.4;
    link_side_counters ra0, rb1;
    ra0.window_s = rb1.window_s = 1.5;
    ra0.sources.push_back(nic_source("ens1", counter_delta({{"tx_bytes", 0}}, {{"tx_bytes", 900}})));
    rb1.sources.push_back(nic_source("ens2", counter_delta({{"rx_crc_errors", 1}}, {{"rx_crc_errors", 8}})));
    p.rail_links = {{"ens1", {ra0, std::nullopt}}, {"ens2", {std::nullopt, rb1}}};
    const auto j = to_json(p);
    REQUIRE(j["counters"]["rails"].size() == 2);
    CHECK(j["counters"]["rails"][0]["rail"] == "ens1");
    CHECK_FALSE(j["counters"]["rails"][0].contains("peer"));
    CHECK(j["counters"]["rails"][1]["peer"]["nic"]["counters"]["deltas"]["rx_crc_errors"] == 7);
    CHECK_FALSE(j["counters"].contains("link"));
    const auto back = point_result_from_json(j);
    REQUIRE(back.rail_links.size() == 2);
    CHECK(back.rail_links[1].rail == "ens2");
    CHECK(back.rail_links[1].link.peer->source("nic")->group("counters").delta("rx_crc_errors") == 7u);
    CHECK_FALSE(back.rail_links[1].link.initiator);
    auto nameless = j;
    nameless["counters"]["rails"][0].erase("rail");
    CHECK_THROWS_AS(point_result_from_json(nameless), spec_error);

    run.points.push_back(back);
    const auto verdicts = counter_verdicts_of(run);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].state == check_state::warning);
    CHECK(verdicts[0].text == "rail ens2: peer ens2: 7 rx_crc_errors (frames with a bad checksum (cable or transceiver)) at 1 MiB "
                              "bandwidth");
}

}  // namespace link_counters_test
