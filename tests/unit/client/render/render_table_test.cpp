// client::render_run_table: the precision column says which interval it shows, and results
// written before the method was recorded still render as they did; the retr column appears
// only with TCP counters.
#include "client/render/table.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace render_table_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

core::point_result latency_point(std::uint64_t size, double achieved) {
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = size;
    core::summary s;
    s.count = 4000;
    s.min = s.p50 = s.p90 = s.p99 = s.p999 = s.max = s.mean = 7000;
    p.rtt_ns = s;
    s.min = s.p50 = s.p90 = s.p99 = s.p999 = s.max = s.mean = 3500;
    p.lat_ns = s;
    p.precision.adaptive = true;
    p.precision.target = 0.01;
    p.precision.achieved = achieved;
    p.precision.met = achieved <= 0.01;
    return p;
}

core::run_result run_of(std::vector<core::point_result> points) {
    core::run_result r;
    r.id = "r-test";
    r.state = core::run_state::completed;
    r.spec.tests = {core::test_kind::latency};
    r.points = std::move(points);
    return r;
}

core::point_result bandwidth_point(std::uint64_t size, std::optional<std::uint64_t> retransmits) {
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = size;
    core::flow_figures f;
    f.direction = "initiator->peer";
    f.bytes = 25'000'000;
    f.seconds = 1;
    f.gbit_per_s = 0.2;
    f.msg_per_s = 25'000'000.0 / static_cast<double>(size);
    p.flows = {f};
    p.gbit_per_s = f.gbit_per_s;
    p.msg_per_s = f.msg_per_s;
    p.precision.achieved = 0.004;
    if (retransmits) {
        core::tcp_point_counters c;
        c.retransmits = *retransmits;
        c.segments_sent = 17'000;
        c.rtt_us = {900, 4000};
        c.cwnd = {10, 40};
        p.tcp_counters = c;
    }
    return p;
}

core::run_result bandwidth_run(std::vector<core::point_result> points) {
    auto r = run_of(std::move(points));
    r.spec.tests = {core::test_kind::bandwidth};
    return r;
}

}  // namespace

TEST_SUITE("render_table") {

TEST_CASE("retr column: each point's retransmitted segments, '-' where a point has none, with a legend") {
    const auto text = client::render_run_table(bandwidth_run({bandwidth_point(65536, 412), bandwidth_point(131072, std::nullopt)}));
    CHECK(text.find("CPU % init/peer  retr\n") != std::string::npos);
    CHECK(text.find("  412\n") != std::string::npos);
    CHECK(text.find("    -\n") != std::string::npos);
    CHECK(text.find("\nretr TCP segments retransmitted") != std::string::npos);
}

TEST_CASE("a result without counters renders as before: no retr column, no legend") {
    const auto text = client::render_run_table(bandwidth_run({bandwidth_point(65536, std::nullopt)}));
    CHECK(text.find("retr") == std::string::npos);
    CHECK(text.find("CPU % init/peer\n") != std::string::npos);
}

TEST_CASE("precision column: a between-block interval is marked b, an unassessed one ?, with a legend") {
    auto blocks = latency_point(64, 0.58);
    blocks.precision.method = core::precision_method::blocks;
    blocks.precision.blocks = 32;
    auto few = latency_point(128, 0.004);
    few.precision.method = core::precision_method::too_few_blocks;
    few.precision.blocks = 2;
    auto plain = latency_point(256, 0.004);
    plain.precision.method = core::precision_method::samples;
    plain.precision.blocks = 16;
    const auto text = client::render_run_table(run_of({blocks, few, plain}));
    CHECK(text.find("±58%b*") != std::string::npos);
    CHECK(text.find("±0.4%?") != std::string::npos);
    CHECK(text.find("±0.4%\n") != std::string::npos);  // samples: no marker
    CHECK(text.find("\nb the blocks of consecutive samples disagree") != std::string::npos);
    CHECK(text.find("\n? fewer than 3 blocks") != std::string::npos);
}

TEST_CASE("a result without the precision method renders as before: no marker, no legend") {
    const auto text = client::render_run_table(run_of({latency_point(64, 0.004)}));
    CHECK(text.find("±0.4%\n") != std::string::npos);
    CHECK(text.find("blocks") == std::string::npos);
}

TEST_CASE("info's table lists the rails, and hostile rail entries render as '?' instead of throwing") {
    const auto info = nlohmann::json::parse(R"({"host": {"version": "0.1.0"}, "transports": [], "rails": [
        {"name": "ra0", "rdma_device": null, "addresses": ["10.61.0.1/24"], "rate_gbit_per_s": 0.2, "mtu": 1500,
         "link_up": true, "nearest_gpus": [{"cuda_index": 3, "pci_bus_id": "0000:19:00.0", "path": "PIX"}]},
        {"name": "ra1", "addresses": "not a list", "link_up": "maybe", "nearest_gpus": [7]},
        17]})");
    const auto text = client::render_info(info);
    CHECK(text.find("rails:\n") != std::string::npos);
    CHECK(text.find("ra0") != std::string::npos);
    CHECK(text.find("10.61.0.1/24") != std::string::npos);
    CHECK(text.find("cuda:3 PIX") != std::string::npos);
    CHECK(text.find("ra1") != std::string::npos);
    CHECK(client::render_info_rails(nlohmann::json::parse(R"({"rails": []})")) == "rails: none\n");
    CHECK(client::render_info_rails(nlohmann::json::object()).empty());  // an older daemon: no section
}

}  // TEST_SUITE

}  // namespace render_table_test
