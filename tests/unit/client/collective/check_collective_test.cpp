// client/collective/check and client/collective/run: `check --collective` verdicts (OK at or
// above --min-busbw, CRITICAL below it or with wrong elements, UNKNOWN for a run that did not
// complete), its Nagios line, its one-op one-size spec, the exit codes of a collective run,
// and collective rows in `meshperf runs`.
#include "client/collective/check.hpp"
#include "core/counter_sources.hpp"
#include "client/collective/run.hpp"
#include "client/support/daemon_client.hpp"
#include "client/render/table.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace check_collective_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

/// A completed ring all-reduce over 4 ranks of 4 MB: 100 µs, busbw 60 GB/s; `wrong` elements.
core::collective_result allreduce_run(std::uint64_t wrong = 0) {
    using series = std::vector<std::vector<double>>;
    core::collective_result r;
    r.id = "c-1";
    r.state = core::run_state::completed;
    r.spec.hosts = {"n0:7470", "n1:7470", "n2:7470", "n3:7470"};
    r.spec.sizes = {4'000'000};
    r.spec.verify = true;
    auto sends = series(4, std::vector<double>(5, 80e-6));
    sends[1] = std::vector<double>(5, 95e-6);
    r.points = {core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 4,
                                                core::dtype::fp32, 4'000'000, series(4, std::vector<double>(5, 100e-6)), sends,
                                                std::vector<std::uint64_t>{0, wrong, 0, 0})};
    r.hosts.resize(4);
    return r;
}

client::collective_limits at_least(double min_busbw) {
    client::collective_limits l;
    l.min_busbw = min_busbw;
    return l;
}

client::collective_limits against(double baseline_busbw) {
    client::collective_limits l;
    l.baseline_busbw = baseline_busbw;
    l.baseline_source = "base.json, run c-0";
    return l;
}

}  // namespace

TEST_CASE("check --collective: OK at or above --min-busbw, with busbw as perfdata") {
    const auto v = client::judge_collective(allreduce_run(), at_least(59.5));
    CHECK(v.state == core::check_state::ok);
    CHECK(client::nagios_line(v) ==
          "MESHPERF OK - allreduce ring over 4 ranks (tcp, host): busbw 60 GB/s at 3.81 MiB, time 100 µs | busbw_gbyte=60;;59.5:;0;");
}

TEST_CASE("check --collective: CRITICAL below --min-busbw, naming the slowest rank and link") {
    const auto v = client::judge_collective(allreduce_run(), at_least(61));
    CHECK(v.state == core::check_state::critical);
    CHECK(core::exit_code(v.state) == 2);
    const auto line = client::nagios_line(v);
    CHECK(line.find("MESHPERF CRITICAL - allreduce ring over 4 ranks") == 0);
    CHECK(line.find("below --min-busbw 61 GB/s; slowest link rank 1 (n1:7470) -> rank 2 (n2:7470) at 505.3 Gbit/s: likely "
                    "cause rank 1 (n1:7470), its sender") != std::string::npos);
}

TEST_CASE("check --collective: the slow link's sender is named as the cause, not the receiver that waits for it") {
    // Issue 26: rank 2 (n2) sends slowly to rank 3, so rank 3 takes longest; the old line said
    // "slowest rank 3 (n3:7470), slowest link rank 2 -> rank 3", naming n2 only as "rank 2".
    using series = std::vector<std::vector<double>>;
    auto run = allreduce_run();
    auto times = series(4, std::vector<double>(5, 100e-6));
    times[3] = std::vector<double>(5, 120e-6);
    auto sends = series(4, std::vector<double>(5, 80e-6));
    sends[2] = std::vector<double>(5, 118e-6);
    run.points = {core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 4,
                                                  core::dtype::fp32, 4'000'000, times, sends, std::vector<std::uint64_t>{0, 0, 0, 0})};
    REQUIRE(run.points[0].slowest_rank == 3);
    const auto v = client::judge_collective(run, at_least(61));
    CHECK(v.summary.find("slowest link rank 2 (n2:7470) -> rank 3 (n3:7470) at ") != std::string::npos);
    CHECK(v.summary.find("likely cause rank 2 (n2:7470), its sender (the slowest rank, rank 3 (n3:7470), waits for what it sends)") !=
          std::string::npos);
    // Without timed links the slowest rank is all there is to name.
    run.points[0].links.clear();
    run.points[0].slowest_link.reset();
    CHECK(client::judge_collective(run, at_least(61)).summary.find("; slowest rank 3 (n3:7470)") != std::string::npos);
}

TEST_CASE("check --collective: wrong elements are CRITICAL whatever the busbw") {
    const auto v = client::judge_collective(allreduce_run(3), at_least(1));
    CHECK(v.state == core::check_state::critical);
    CHECK(v.summary.find("3 wrong elements (data corrupted on the way)") != std::string::npos);
}

/// A rank's NIC counters over a point of 1 s: `deltas` on `interface`.
core::link_side_counters nic_counters(std::string interface, core::counter_values deltas) {
    core::link_side_counters c;
    c.window_s = 1;
    c.sources.push_back(core::nic_source(std::move(interface), {}));
    c.source("nic")->group("counters").deltas = std::move(deltas);
    return c;
}

TEST_CASE("check --collective: a rank's error counters make a passing busbw WARNING, naming the rank and the counter") {
    auto run = allreduce_run();
    auto& p = run.points[0];
    p.rank_counters = {nic_counters("eth0", {{"tx_bytes", 4'000'000}, {"rx_crc_errors", 0}}), std::nullopt,
                       nic_counters("eth0", {{"tx_bytes", 4'000'000}, {"rx_crc_errors", 7}, {"rx_dropped", 2}}),
                       nic_counters("eth0", {{"tx_bytes", 4'000'000}})};
    const auto v = client::judge_collective(run, at_least(59.5));
    CHECK(v.state == core::check_state::warning);
    CHECK(core::exit_code(v.state) == 1);
    // Rank 2 is the receiving end of the slowest link (rank 1 -> rank 2).
    CHECK(v.summary.find("; rank 2 (n2:7470) eth0: ") != std::string::npos);
    CHECK(v.summary.find("7 rx_crc_errors (frames with a bad checksum (cable or transceiver))") != std::string::npos);
    CHECK(v.summary.find("2 rx_dropped") != std::string::npos);
    CHECK(v.summary.find("(an end of the slowest link)") != std::string::npos);
    CHECK(v.summary.find("rank 0 (") == std::string::npos);  // its counter stayed at 0
    CHECK(v.perfdata.find("busbw_gbyte=60;;59.5:;0; ") == 0);
    CHECK(v.perfdata.find("rank2_eth0_rx_crc_errors=7;;;0;") != std::string::npos);
    // Traffic alone is evidence, not a finding; with --ignore-counters nothing is judged.
    auto ignore = at_least(59.5);
    ignore.judge_counters = false;
    CHECK(client::judge_collective(run, ignore).state == core::check_state::ok);
    run.points[0].rank_counters[2] = nic_counters("eth0", {{"tx_bytes", 4'000'000}});
    CHECK(client::judge_collective(run, at_least(59.5)).state == core::check_state::ok);
}

TEST_CASE("check --collective: a rank's port that went down is CRITICAL; symbol errors follow the hourly threshold") {
    auto run = allreduce_run();
    auto port = nic_counters("eth3", {});
    port.sources.clear();  // no NIC: the port alone
    port.window_s = 10;
    port.sources.push_back(core::rdma_port_source("mlx5_3", 1, {}, {}));
    port.source("rdma")->group("counters").deltas = {{"link_downed", 1}, {"symbol_error", 1}};
    run.points[0].rank_counters = {std::nullopt, std::nullopt, std::nullopt, port};
    auto v = client::judge_collective(run, at_least(1));
    CHECK(v.state == core::check_state::critical);
    CHECK(v.summary.find("; rank 3 (n3:7470) mlx5_3 port 1: 1 link_downed (the port lost its link)") != std::string::npos);
    // 1 symbol error in 10 s is 360/hour: above the IBTA's 120/hour, named; below a raised threshold, not.
    CHECK(v.summary.find("symbol_error in 10.0 s (360/hour") != std::string::npos);
    auto lax = at_least(1);
    lax.counters.symbol_errors_per_hour = 1000;
    v = client::judge_collective(run, lax);
    CHECK(v.state == core::check_state::critical);
    CHECK(v.summary.find("symbol_error") == std::string::npos);
}

TEST_CASE("check --collective: a ring link's TCP retransmits are judged against --retransmit-warn and -crit") {
    auto run = allreduce_run();
    auto& p = run.points[0];
    core::tcp_point_counters clean, lossy;
    clean.segments_sent = lossy.segments_sent = 1000;
    lossy.retransmits = 20;  // 2%: above the 1% of WARNING, below the 5% of CRITICAL
    p.rank_tcp_counters = {clean, lossy, clean, std::nullopt};
    auto v = client::judge_collective(run, at_least(59.5));
    CHECK(v.state == core::check_state::warning);
    // Rank 1 sends over the slowest link, rank 1 -> rank 2.
    CHECK(v.summary.find("; rank 1 (n1:7470) sending to rank 2 (n2:7470): TCP retransmits: 20 of 1000 segments retransmitted "
                         "(2.00%, above 1%) (the slowest link)") != std::string::npos);
    CHECK(v.perfdata.find(" rank1_retransmit_share=0.02;;;0;") != std::string::npos);
    p.rank_tcp_counters[1]->retransmits = 60;
    CHECK(client::judge_collective(run, at_least(59.5)).state == core::check_state::critical);
    auto lax = at_least(59.5);
    lax.counters.retransmit_warn_share = 0.07;
    lax.counters.retransmit_crit_share = 0.1;
    CHECK(client::judge_collective(run, lax).state == core::check_state::ok);
    lax.judge_counters = false;
    lax.counters = {};
    CHECK(client::judge_collective(run, lax).state == core::check_state::ok);
}

TEST_CASE("check --collective: a run that did not complete is UNKNOWN with its error") {
    auto run = allreduce_run();
    run.state = core::run_state::failed;
    run.error = "rank 2 (n2:7470) stopped answering";
    const auto v = client::judge_collective(run, at_least(10));
    CHECK(v.state == core::check_state::unknown);
    CHECK(core::exit_code(v.state) == 3);
    CHECK(client::nagios_line(v) == "MESHPERF UNKNOWN - allreduce: the collective c-1 failed: rank 2 (n2:7470) stopped answering");
}

TEST_CASE("check --collective --baseline: WARNING below --warn, CRITICAL below --crit of the baseline's busbw") {
    // busbw 60 GB/s against a baseline of 64: 94% (OK), of 70: 86% (WARNING), of 90: 67% (CRITICAL).
    auto ok = client::judge_collective(allreduce_run(), against(64));
    CHECK(ok.state == core::check_state::ok);
    CHECK(client::nagios_line(ok) ==
          "MESHPERF OK - allreduce ring over 4 ranks (tcp, host): busbw 60 GB/s at 3.81 MiB, time 100 µs, 94% of the "
          "baseline's 64 GB/s (base.json, run c-0) | busbw_gbyte=60;57.6:;48:;0;");
    const auto warn = client::judge_collective(allreduce_run(), against(70));
    CHECK(warn.state == core::check_state::warning);
    CHECK(warn.summary.find("86% of the baseline's 70 GB/s") != std::string::npos);
    CHECK(warn.summary.find("below --warn 0.9 of the baseline; slowest link rank 1 (n1:7470) -> rank 2 (n2:7470)") != std::string::npos);
    const auto crit = client::judge_collective(allreduce_run(), against(90));
    CHECK(crit.state == core::check_state::critical);
    CHECK(crit.summary.find("below --crit 0.75 of the baseline") != std::string::npos);
    // With --min-busbw too, the stricter critical threshold is the perfdata's.
    auto both = against(64);
    both.min_busbw = 50;
    CHECK(client::judge_collective(allreduce_run(), both).perfdata == "busbw_gbyte=60;57.6:;50:;0;");
}

TEST_CASE("check --collective --baseline: the point of the same op, algorithm, ranks, size and transport") {
    auto base = allreduce_run();
    base.id = "c-7";
    const auto doc = core::to_json(base);
    client::collective_options o;
    o.hosts = "a,b,c,d";
    o.sizes = "4000000";
    const auto none = [](std::string_view) { return false; };
    auto spec = client::collective_check_spec(o, none);
    const auto [busbw, source] = client::collective_baseline(doc, "base.json", spec);
    CHECK(busbw == doctest::Approx(60));
    CHECK(source == "base.json, run c-7");
    // Another size, another rank count, another transport, not a collective result: each refused, saying why.
    spec.sizes = {1 << 20};
    CHECK_THROWS_WITH_AS(client::collective_baseline(doc, "base.json", spec),
                         doctest::Contains("has no allreduce ring point over 4 ranks at 1 MiB (it has: allreduce ring over 4 "
                                           "ranks at 3.81 MiB)"),
                         core::spec_error);
    spec.sizes = {4'000'000};
    spec.hosts.pop_back();
    CHECK_THROWS_AS(client::collective_baseline(doc, "base.json", spec), core::spec_error);
    spec.hosts.push_back("d");
    spec.transport = "rdma";
    CHECK_THROWS_WITH_AS(client::collective_baseline(doc, "base.json", spec), doctest::Contains("measured over tcp"),
                         core::spec_error);
    spec.transport = "tcp";
    CHECK_THROWS_AS(client::collective_baseline(nlohmann::json{{"points", 3}}, "base.json", spec), core::spec_error);
}

TEST_CASE("check --collective --prom-file: status, busbw, time and wrong elements as gauges") {
    const auto v = client::judge_collective(allreduce_run(2), at_least(10));
    const auto text = client::collective_check_textfile(v, 1700000000);
    const std::string labels = R"(op="allreduce",algo="ring",transport="tcp",memory="host")";
    CHECK(text.find("meshperf_collective_check_status{" + labels + "} 2\n") != std::string::npos);
    CHECK(text.find("meshperf_collective_check_busbw_bits_per_second{" + labels + R"(,ranks="4",size_bytes="4000000"} 480000000000)") !=
          std::string::npos);
    CHECK(text.find("meshperf_collective_check_time_seconds{" + labels + R"(,ranks="4",size_bytes="4000000"} 0.0001)") !=
          std::string::npos);
    CHECK(text.find("meshperf_collective_check_wrong_elements{" + labels + R"(,ranks="4",size_bytes="4000000"} 2)") !=
          std::string::npos);
    CHECK(text.find("meshperf_collective_check_last_run_timestamp_seconds{" + labels + "} 1700000000") != std::string::npos);
    // UNKNOWN: the status and the time, no figures.
    const auto unknown = client::collective_check_textfile(
        client::unknown_collective({"allreduce", "", "tcp", "host"}, "host down"), 1700000000);
    CHECK(unknown.find(R"(meshperf_collective_check_status{op="allreduce",algo="",transport="tcp",memory="host"} 3)") !=
          std::string::npos);
    CHECK(unknown.find("meshperf_collective_check_busbw_bits_per_second{") == std::string::npos);
}

TEST_CASE("check --collective: one op at one size, verified; more is a usage error") {
    client::collective_options o;
    o.hosts = "a,b";
    o.sizes = "1M";
    const auto none = [](std::string_view) { return false; };
    const auto spec = client::collective_check_spec(o, none);
    CHECK(spec.verify);
    CHECK(spec.sizes == std::vector<std::uint64_t>{1 << 20});
    o.ops = "allreduce,alltoall";
    CHECK_THROWS_AS(client::collective_check_spec(o, none), client::client_error);
    o.ops = "allreduce";
    o.sizes = "1K..1M";
    CHECK_THROWS_AS(client::collective_check_spec(o, none), client::client_error);
}

TEST_CASE("collective exit codes: 0 completed, 3 failed before it started, 1 failed mid-way") {
    auto run = allreduce_run();
    CHECK(client::collective_exit_code(run) == client::exit_ok);
    run.state = core::run_state::failed;
    CHECK(client::collective_exit_code(run) == client::exit_run_failed);  // hosts described, a point kept
    run.points.clear();
    run.failed_at_start = true;  // the coordinator's word: a rank could not join
    CHECK(client::failed_at_start(run));
    CHECK(client::collective_exit_code(run) == client::exit_unreachable);
    run.state = core::run_state::cancelled;
    CHECK(client::collective_exit_code(run) == client::exit_run_failed);
}

TEST_CASE("runs: collective rows show their kind and their number of hosts") {
    const nlohmann::json list{{"runs",
                               {{{"id", "c-1"}, {"kind", "collective"}, {"state", "completed"}, {"hosts", {"a", "b", "c"}},
                                 {"created_at", "t"}, {"points", 4}, {"error", nullptr}},
                                {{"id", "r-1"}, {"state", "failed"}, {"peer", "n2:7470"}, {"created_at", "t"}, {"points", 0},
                                 {"error", "peer down"}}}}};
    const auto text = client::render_run_list(list);
    CHECK(text.find("kind") != std::string::npos);
    const auto row = text.substr(text.find("c-1  collective  completed  "));
    CHECK(row.substr(0, row.find('\n')).find("3 hosts  t") != std::string::npos);
    CHECK(text.find("r-1  sweep       failed     n2:7470") != std::string::npos);
}

}  // namespace check_collective_test
