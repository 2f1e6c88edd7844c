// client/check_collective and client/collective_run: `check --collective` verdicts (OK at or
// above --min-busbw, CRITICAL below it or with wrong elements, UNKNOWN for a run that did not
// complete), its Nagios line, its one-op one-size spec, the exit codes of a collective run,
// and collective rows in `meshperf runs`.
#include "client/check_collective.hpp"
#include "client/collective_run.hpp"
#include "client/daemon_client.hpp"
#include "client/render_table.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace meshperf;

namespace {

/// A completed ring all-reduce over 4 ranks of 4 MB: 100 µs, busbw 60 GB/s; `wrong` elements.
core::collective_result allreduce_run(std::uint64_t wrong = 0) {
    using series = std::vector<std::vector<double>>;
    core::collective_result r;
    r.id = "c-1";
    r.state = "completed";
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

}  // namespace

TEST_CASE("check --collective: OK at or above --min-busbw, with busbw as perfdata") {
    const auto v = client::judge_collective(allreduce_run(), 59.5);
    CHECK(v.state == core::check_state::ok);
    CHECK(client::nagios_line(v) ==
          "MESHPERF OK - allreduce ring over 4 ranks (tcp, host): busbw 60 GB/s at 3.81 MiB, time 100 µs | busbw_gbyte=60;;59.5:;0;");
}

TEST_CASE("check --collective: CRITICAL below --min-busbw, naming the slowest rank and link") {
    const auto v = client::judge_collective(allreduce_run(), 61);
    CHECK(v.state == core::check_state::critical);
    CHECK(core::exit_code(v.state) == 2);
    const auto line = client::nagios_line(v);
    CHECK(line.find("MESHPERF CRITICAL - allreduce ring over 4 ranks") == 0);
    CHECK(line.find("below --min-busbw 61 GB/s; slowest rank 0 (n0:7470), slowest link rank 1 -> rank 2 at") != std::string::npos);
}

TEST_CASE("check --collective: wrong elements are CRITICAL whatever the busbw") {
    const auto v = client::judge_collective(allreduce_run(3), 1);
    CHECK(v.state == core::check_state::critical);
    CHECK(v.summary.find("3 wrong elements (data corrupted on the way)") != std::string::npos);
}

TEST_CASE("check --collective: a run that did not complete is UNKNOWN with its error") {
    auto run = allreduce_run();
    run.state = "failed";
    run.error = "rank 2 (n2:7470) stopped answering";
    const auto v = client::judge_collective(run, 10);
    CHECK(v.state == core::check_state::unknown);
    CHECK(core::exit_code(v.state) == 3);
    CHECK(client::nagios_line(v) == "MESHPERF UNKNOWN - allreduce: the collective c-1 failed: rank 2 (n2:7470) stopped answering");
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
    run.state = "failed";
    CHECK(client::collective_exit_code(run) == client::exit_run_failed);  // hosts described, a point kept
    run.points.clear();
    run.failed_at_start = true;  // the coordinator's word: a rank could not join
    CHECK(client::failed_at_start(run));
    CHECK(client::collective_exit_code(run) == client::exit_unreachable);
    run.state = "cancelled";
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
