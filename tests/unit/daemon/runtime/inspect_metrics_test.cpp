#include "daemon/runtime/inspect_metrics.hpp"
#include "daemon/runtime/inspection_state.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>

namespace inspect_metrics_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

json finding(const std::string& state, const std::string& check, const std::string& subject) {
    return {{"state", state}, {"check", check}, {"subject", subject}, {"message", "m"}};
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

TEST_CASE("inspect metrics: each check's worst state, the findings not OK, the loopback") {
    const json doc = {{"host", "node1"},
                      {"state", "CRITICAL"},
                      {"exit_code", 2},
                      {"findings", json::array({finding("OK", "pcie_link", "GPU 0000:13:00.0"),
                                                finding("CRITICAL", "pcie_link", "GPU 0000:33:00.0"),
                                                finding("WARNING", "acs", "bridge 0000:92:00.0"),
                                                finding("UNKNOWN", "acs", "bridge 0000:12:00.0"),
                                                finding("OK", "rails", "node")})},
                      {"loopback", json::array({{{"device", "mlx5_0"}, {"port", 1}, {"gbit_per_s", 391.5}},
                                                {{"device", "mlx5_1"}, {"port", 1}, {"gbit_per_s", nullptr}}})},
                      {"gpu_copies", json::array({{{"copy", "h2d"}, {"gpu", "cuda:0"}, {"gb_per_s", 52.5}},
                                                  {{"copy", "d2h"}, {"gpu", "cuda:0"}, {"gb_per_s", nullptr}},
                                                  {{"copy", "d2h"}, {"gpu", "cuda:1"}, {"gb_per_s", -3}}})},
                      {"node", json::object()}};
    const auto text = daemon::inspection_exposition(doc, 1700000000.5);
    // The textfile's families come first, unchanged.
    CHECK(has_line(text, R"(meshperf_inspect_state{host="node1"} 2)"));
    CHECK(has_line(text, R"(meshperf_inspect_findings{host="node1",state="CRITICAL"} 1)"));
    CHECK(has_line(text, R"(meshperf_inspect_timestamp_seconds{host="node1"} 1700000000.5)"));
    // Worst per check, in Nagios order: WARNING is worse than UNKNOWN.
    CHECK(has_line(text, "# TYPE meshperf_inspect_check_state gauge"));
    CHECK(has_line(text, R"(meshperf_inspect_check_state{host="node1",check="pcie_link"} 2)"));
    CHECK(has_line(text, R"(meshperf_inspect_check_state{host="node1",check="acs"} 1)"));
    CHECK(has_line(text, R"(meshperf_inspect_check_state{host="node1",check="rails"} 0)"));
    // Findings not OK only.
    CHECK(has_line(text, R"(meshperf_inspect_finding_state{host="node1",check="pcie_link",subject="GPU 0000:33:00.0"} 2)"));
    CHECK(has_line(text, R"(meshperf_inspect_finding_state{host="node1",check="acs",subject="bridge 0000:12:00.0"} 3)"));
    CHECK(count_of(text, "meshperf_inspect_finding_state{") == 3);
    CHECK_FALSE(text.find("GPU 0000:13:00.0") != std::string::npos);
    // Only a measured loopback has a series, in bit/s.
    CHECK(has_line(text, R"(meshperf_rnic_loopback_bits_per_second{host="node1",device="mlx5_0",port="1"} 391500000000)"));
    CHECK(count_of(text, "meshperf_rnic_loopback_bits_per_second{") == 1);
    // Only a GPU copy with a positive figure has a series, in bytes/s.
    CHECK(has_line(text, R"(meshperf_gpu_copy_bytes_per_second{host="node1",gpu="cuda:0",copy="h2d"} 52500000000)"));
    CHECK(count_of(text, "meshperf_gpu_copy_bytes_per_second{") == 1);
    CHECK(count_of(text, "# TYPE ") == count_of(text, "# HELP "));
}

TEST_CASE("inspect metrics: findings beyond the cap are counted but get no series; the worst are kept") {
    json findings = json::array();
    for (int i = 0; i < 50; ++i) findings.push_back(finding("UNKNOWN", "acs", fmt::format("bridge {}", i)));
    findings.push_back(finding("CRITICAL", "rail_link", "rail enp1"));
    findings.push_back(finding("CRITICAL", "rail_link", "rail enp1"));  // the same subject twice: one series
    const json doc = {{"host", "n"}, {"state", "CRITICAL"}, {"exit_code", 2}, {"findings", findings}, {"node", json::object()}};
    const auto text = daemon::inspection_exposition(doc, 1);
    CHECK(count_of(text, "meshperf_inspect_finding_state{") == daemon::max_exported_findings);
    CHECK(has_line(text, R"(meshperf_inspect_finding_state{host="n",check="rail_link",subject="rail enp1"} 2)"));
    CHECK(has_line(text, R"(meshperf_inspect_findings{host="n",state="UNKNOWN"} 50)"));
}

TEST_CASE("inspect metrics: a document without findings still gives the verdict") {
    const auto text = daemon::inspection_exposition(json{{"host", "n"}, {"exit_code", 3}}, 1);
    CHECK(has_line(text, R"(meshperf_inspect_state{host="n"} 3)"));
    CHECK(count_of(text, "meshperf_inspect_check_state{") == 0);
}

TEST_CASE("inspection state: none before the first, then the latest") {
    daemon::inspect_config c;
    c.interval_s = 2;
    c.jitter_s = 0;
    daemon::inspection_state s(c);
    CHECK(s.schedule().interval_s == 2.0);
    CHECK_FALSE(s.last());
    CHECK(s.count() == 0);
    s.record({json{{"state", "OK"}}, std::chrono::system_clock::now(), 0.01});
    s.record({json{{"state", "CRITICAL"}}, std::chrono::system_clock::now(), 0.02});
    REQUIRE(s.last());
    CHECK(s.last()->document["state"] == "CRITICAL");
    CHECK(s.last()->duration_s == doctest::Approx(0.02));
    CHECK(s.count() == 2);
    auto held = s.exclusive();
    CHECK(held.owns_lock());
}

}  // namespace inspect_metrics_test
