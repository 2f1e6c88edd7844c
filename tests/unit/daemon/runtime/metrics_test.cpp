#include "daemon/runtime/metrics.hpp"
#include "core/counter_sources.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <string>

namespace metrics_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

core::run_result run_with_points(const std::string& peer, const std::string& state) {
    core::run_result r;
    r.id = "r-1";
    r.state = core::recorded_state::from_text(state);
    r.spec.peer = peer;
    core::point_result lat;
    lat.test = core::test_kind::latency;
    lat.size_bytes = 8;
    core::summary s;
    s.count = 100;
    s.min = 10'000;
    s.p50 = 20'000;
    s.p90 = 30'000;
    s.p99 = 40'000;
    s.p999 = 50'000;
    s.max = 60'000;
    lat.lat_ns = s;
    core::point_result bw;
    bw.test = core::test_kind::bandwidth;
    bw.size_bytes = 1 << 20;
    bw.gbit_per_s = 9.41;
    r.points = {lat, bw};
    return r;
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST_CASE("metrics: an idle daemon exports build info, zero counters and the queue") {
    daemon::metrics_registry m;
    const auto text = m.render(2);
    CHECK(has_line(text, "# TYPE meshperf_build_info gauge"));
    CHECK(has_line(text, std::string("meshperf_build_info{version=\"") + MESHPERF_VERSION + "\"} 1"));
    CHECK(has_line(text, "# TYPE meshperf_runs_total counter"));
    CHECK(has_line(text, "meshperf_runs_total{state=\"completed\"} 0"));
    CHECK(has_line(text, "meshperf_runs_total{state=\"failed\"} 0"));
    CHECK(has_line(text, "meshperf_runs_total{state=\"cancelled\"} 0"));
    CHECK(has_line(text, "meshperf_run_queue_length 2"));
    CHECK(text.find("meshperf_bandwidth_bits_per_second{") == std::string::npos);
}

TEST_CASE("metrics: latest figures per peer, transport, test and size in base units") {
    daemon::metrics_registry m;
    m.record_run(run_with_points("node2:7470", "completed"), std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
    const auto text = m.render(0);
    CHECK(has_line(text, "# TYPE meshperf_bandwidth_bits_per_second gauge"));
    CHECK(has_line(text, "meshperf_bandwidth_bits_per_second{peer=\"node2:7470\",transport=\"tcp\",test=\"bandwidth\",size_bytes=\"1048576\"} 9410000000"));
    CHECK(has_line(text, "# TYPE meshperf_latency_seconds summary"));
    CHECK(has_line(text, "meshperf_latency_seconds{peer=\"node2:7470\",transport=\"tcp\",size_bytes=\"8\",quantile=\"0.5\"} 2e-05"));
    CHECK(has_line(text, "meshperf_latency_seconds{peer=\"node2:7470\",transport=\"tcp\",size_bytes=\"8\",quantile=\"0\"} 1e-05"));
    CHECK(has_line(text, "meshperf_latency_seconds{peer=\"node2:7470\",transport=\"tcp\",size_bytes=\"8\",quantile=\"1\"} 6e-05"));
    CHECK(has_line(text, "meshperf_runs_total{state=\"completed\"} 1"));
    CHECK(has_line(text, "meshperf_last_run_success{peer=\"node2:7470\",transport=\"tcp\"} 1"));
    CHECK(has_line(text, "meshperf_last_run_timestamp_seconds{peer=\"node2:7470\",transport=\"tcp\"} 1700000000"));
    CHECK(has_line(text, "meshperf_run_failures_total{peer=\"node2:7470\",transport=\"tcp\"} 0"));
}

TEST_CASE("metrics: a failed run counts, keeps the earlier figures and flags the peer") {
    daemon::metrics_registry m;
    m.record_run(run_with_points("node2:7470", "completed"));
    auto failed = run_with_points("node2:7470", "failed");
    failed.points.clear();
    m.record_run(failed);
    m.record_run(failed);
    const auto text = m.render(0);
    CHECK(has_line(text, "meshperf_runs_total{state=\"failed\"} 2"));
    CHECK(has_line(text, "meshperf_run_failures_total{peer=\"node2:7470\",transport=\"tcp\"} 2"));
    CHECK(has_line(text, "meshperf_last_run_success{peer=\"node2:7470\",transport=\"tcp\"} 0"));
    CHECK(text.find("meshperf_bandwidth_bits_per_second{peer=\"node2:7470\"") != std::string::npos);
}

TEST_CASE("metrics: label values are escaped") {
    daemon::metrics_registry m;
    m.record_run(run_with_points("we\"ird\\host:1", "completed"));
    CHECK(m.render(0).find("peer=\"we\\\"ird\\\\host:1\"") != std::string::npos);
}


TEST_CASE("metrics: the latest run's retransmit ratio and error-counter increases per peer, not its traffic counters") {
    daemon::metrics_registry m;
    auto run = run_with_points("node2:7470", "completed");
    core::tcp_point_counters tcp;
    tcp.segments_sent = 1000;
    tcp.retransmits = 25;
    run.points[1].tcp_counters = tcp;
    core::link_side_counters peer;
    peer.window_s = 1;
    peer.sources.push_back(core::nic_source("eth1", core::counter_delta({{"carrier_changes", 1}, {"rx_crc_errors", 5}, {"rx_bytes", 0}},
                                                              {{"carrier_changes", 3}, {"rx_crc_errors", 5}, {"rx_bytes", 900}})));
    run.points[1].link.peer = peer;
    run.points[0].link.peer = peer;  // a second point adds to the run's increase
    m.record_run(run);
    auto text = m.render(0);
    CHECK(has_line(text, "# TYPE meshperf_link_counter_increase gauge"));
    CHECK(has_line(text, "meshperf_tcp_retransmit_ratio{peer=\"node2:7470\",transport=\"tcp\",test=\"bandwidth\",size_bytes=\"1048576\"} 0.025"));
    CHECK(has_line(text, "meshperf_link_counter_increase{peer=\"node2:7470\",transport=\"tcp\",side=\"peer\",device=\"eth1\",counter=\"carrier_changes\",meaning=\"error\"} 4"));
    CHECK(has_line(text, "meshperf_link_counter_increase{peer=\"node2:7470\",transport=\"tcp\",side=\"peer\",device=\"eth1\",counter=\"rx_crc_errors\",meaning=\"error\"} 0"));
    CHECK(text.find("counter=\"rx_bytes\"") == std::string::npos);

    // The next run replaces the increases: they are the latest run's, not a running total.
    auto clean = run_with_points("node2:7470", "completed");
    peer.source("nic")->group("counters") = core::counter_delta({{"carrier_changes", 3}}, {{"carrier_changes", 3}});
    clean.points[1].link.peer = peer;
    m.record_run(clean);
    text = m.render(0);
    CHECK(has_line(text, "meshperf_link_counter_increase{peer=\"node2:7470\",transport=\"tcp\",side=\"peer\",device=\"eth1\",counter=\"carrier_changes\",meaning=\"error\"} 0"));
}

TEST_CASE("metrics: at most max_peers peers keep series; the least recently measured go, counted (issue 47 item 13)") {
    daemon::metrics_registry m(3);
    for (int i = 0; i < 2000; ++i) m.record_run(run_with_points(fmt::format("10.9.{}.{}:1", i / 250, i % 250), "failed"));
    auto text = m.render(0);
    CHECK(has_line(text, "# TYPE meshperf_metrics_evicted_peers_total counter"));
    CHECK(has_line(text, "meshperf_metrics_evicted_peers_total 1997"));
    CHECK(text.size() < 8000);  // three peers' series, not 2,000
    for (const auto* gone : {"10.9.0.0:1", "10.9.7.246:1"}) CHECK(text.find(gone) == std::string::npos);
    for (const auto* kept : {"10.9.7.247:1", "10.9.7.248:1", "10.9.7.249:1"}) {
        CHECK(has_line(text, fmt::format("meshperf_last_run_success{{peer=\"{}\",transport=\"tcp\"}} 0", kept)));
        CHECK(has_line(text, fmt::format("meshperf_bandwidth_bits_per_second{{peer=\"{}\",transport=\"tcp\",test=\"bandwidth\","
                                         "size_bytes=\"1048576\"}} 9410000000",
                                         kept)));
    }
    // Measuring a kept peer again makes it the most recent: the next new peer evicts another.
    m.record_run(run_with_points("10.9.7.247:1", "completed"));
    m.record_run(run_with_points("new:1", "completed"));
    text = m.render(0);
    CHECK(text.find("10.9.7.247:1") != std::string::npos);
    CHECK(text.find("10.9.7.248:1") == std::string::npos);
    CHECK(has_line(text, "meshperf_metrics_evicted_peers_total 1998"));
    CHECK(has_line(text, "meshperf_runs_total{state=\"failed\"} 2000"));  // the run counters keep every run
}

}  // namespace metrics_test
