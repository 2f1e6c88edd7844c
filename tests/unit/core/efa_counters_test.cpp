// AWS EFA devices' hw_counters read as an RDMA port's (they live in the same sysfs place,
// class/infiniband/<efa>/ports/1/hw_counters) from a fixture tree with EFA's names, and the
// verdicts they give: SRD retransmits, retransmit timeouts, impaired and unresponsive
// remotes, receive drops are warnings; traffic counters give none.
#include "tests/unit/scratch_dir.hpp"
#include "core/counter_sources.hpp"
#include "core/counter_verdicts.hpp"
#include "transport/link_counters_reader.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <map>

namespace efa_counters_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace fs = std::filesystem;

namespace {

/// class/infiniband/rdmap16s27/ports/1/hw_counters under `root` with EFA's counters.
void efa_fixture(const fs::path& root, const std::map<std::string, std::uint64_t>& values) {
    const auto dir = root / "class/infiniband/rdmap16s27/ports/1/hw_counters";
    fs::create_directories(dir);
    for (const auto& [name, v] : values) std::ofstream(dir / name) << v << "\n";
}

std::map<std::string, std::uint64_t> efa_before() {
    return {{"tx_bytes", 1000},          {"tx_pkts", 10},          {"rx_bytes", 2000},
            {"rx_pkts", 20},             {"rx_drops", 0},          {"send_bytes", 900},
            {"recv_bytes", 1900},        {"rdma_read_bytes", 0},   {"rdma_write_bytes", 0},
            {"retrans_bytes", 0},        {"retrans_pkts", 0},      {"retrans_timeout_events", 0},
            {"impaired_remote_conn_events", 0}, {"unresponsive_remote_events", 0}, {"lifespan", 12}};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("EFA hw_counters: retransmits and unresponsive remotes are warnings, traffic is not") {
    const auto root = unit_test::scratch_dir("efa_counters") / "efa";
    efa_fixture(root, efa_before());
    transport::link_counter_target target;
    target.count(core::rdma_port_source_kind, "rdmap16s27", 1);
    transport::link_counter_probe probe(root, target);
    probe.read_before();
    auto after = efa_before();
    after["tx_bytes"] += 8u << 20;
    after["tx_pkts"] += 1000;
    after["rdma_write_bytes"] += 4096;
    after["retrans_pkts"] += 12;
    after["retrans_bytes"] += 12 * 8192;
    after["unresponsive_remote_events"] += 1;
    efa_fixture(root, after);
    probe.read_after();
    const auto side = probe.counters();
    REQUIRE(side);
    const auto* efa = side->source("rdma");
    REQUIRE(efa);
    CHECK(efa->device == "rdmap16s27");
    CHECK(efa->group("hw_counters").delta("retrans_pkts") == 12u);
    CHECK(efa->group("hw_counters").delta("tx_bytes") == (8u << 20));

    const core::link_counters c{*side, std::nullopt};
    const auto findings = core::judge_link_counters(c);
    REQUIRE(findings.size() == 2);
    for (const auto& f : findings) {
        CHECK(f.state == core::check_state::warning);
        CHECK(f.side == "initiator");
        CHECK(f.where == "rdmap16s27 port 1");
    }
    CHECK((findings[0].counter == "retrans_pkts" || findings[1].counter == "retrans_pkts"));
    CHECK((findings[0].counter == "unresponsive_remote_events" || findings[1].counter == "unresponsive_remote_events"));
    CHECK(core::meaning_of("retrans_timeout_events") == core::counter_meaning::error);
    CHECK(core::meaning_of("impaired_remote_conn_events") == core::counter_meaning::error);
    CHECK(core::meaning_of("rx_drops") == core::counter_meaning::error);
    CHECK(core::meaning_of("rdma_write_bytes") == core::counter_meaning::traffic);
    CHECK(core::meaning_of("retrans_bytes") == core::counter_meaning::traffic);  // the packets speak for it, once

    const auto warnings = core::link_counter_warnings(c, "1 MiB bandwidth", 0, 0);
    REQUIRE(warnings.size() == 1);
    CHECK(has(warnings[0], "12 retrans_pkts"));
    CHECK(has(warnings[0], "EFA remotes that stopped responding"));
    fs::remove_all(root.parent_path());
}

}  // namespace efa_counters_test
