// transport/link_counters_reader: a NIC's and an RDMA port's counters read from a sysfs
// fixture tree (mlx5's names), around a "point" that changes them; unreadable files left
// out, an unreadable directory named once.
#include "tests/unit/scratch_dir.hpp"
#include "core/counter_sources.hpp"
#include "transport/link_counters_reader.hpp"

#include <doctest/doctest.h>
#include <fstream>

namespace link_counters_reader_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
}

/// class/net/eth7 and class/infiniband/mlx5_3/ports/1 under `root`, with the given values.
void fixture(const fs::path& root, std::uint64_t tx_bytes, std::uint64_t flaps, std::uint64_t symbol_errors,
             std::uint64_t link_downed, std::uint64_t cnp) {
    const auto net = root / "class/net/eth7";
    write(net / "statistics/tx_bytes", std::to_string(tx_bytes) + "\n");
    write(net / "statistics/rx_crc_errors", "0\n");
    write(net / "statistics/rx_dropped", "N/A\n");  // a driver that has no such count
    write(net / "carrier_changes", std::to_string(flaps) + "\n");
    const auto port = root / "class/infiniband/mlx5_3/ports/1";
    write(port / "counters/symbol_error", std::to_string(symbol_errors) + "\n");
    write(port / "counters/link_downed", std::to_string(link_downed) + "\n");
    write(port / "counters/port_xmit_data", "123456789\n");
    write(port / "hw_counters/np_cnp_sent", std::to_string(cnp) + "\n");
    write(port / "hw_counters/out_of_sequence", "0\n");
}

}  // namespace

TEST_CASE("read_counter_directory: numeric files only; a missing directory is unknown, not empty") {
    const auto root = unit_test::scratch_dir("link_counters_reader") / "dir";
    fixture(root, 10, 1, 0, 0, 0);
    const auto stats = transport::read_counter_directory(root / "class/net/eth7/statistics");
    REQUIRE(stats);
    CHECK(stats->at("tx_bytes") == 10u);
    CHECK(stats->count("rx_dropped") == 0);  // "N/A" is left out, never read as 0
    CHECK_FALSE(transport::read_counter_directory(root / "class/net/nosuch/statistics"));
}

/// What a point reads: the NIC `interface` (none when empty) and the RDMA port `device` (ditto).
transport::link_counter_target nic_and_port(std::string interface, std::string device, unsigned port) {
    transport::link_counter_target t;
    t.count(core::nic_source_kind, std::move(interface));
    t.count(core::rdma_port_source_kind, std::move(device), port);
    return t;
}

TEST_CASE("link_counter_probe: the NIC's and the port's deltas around a point, from a fixture tree") {
    const auto root = unit_test::scratch_dir("link_counters_reader") / "probe";
    fixture(root, 1000, 3, 7, 1, 50);
    transport::link_counter_probe probe(root, nic_and_port("eth7", "mlx5_3", 1));
    CHECK_FALSE(probe.counters());  // nothing until both readings exist
    probe.read_before();
    fixture(root, 1'001'000, 5, 44, 2, 80);  // the point: bytes sent, two flaps, 37 symbol errors, a link_downed
    probe.read_after();
    const auto c = probe.counters();
    REQUIRE(c);
    CHECK(c->window_s > 0);
    REQUIRE(c->source("nic"));
    CHECK(c->source("nic")->device == "eth7");
    CHECK(c->source("nic")->group("counters").delta("tx_bytes") == 1'000'000u);
    CHECK(c->source("nic")->group("counters").delta("carrier_changes") == 2u);
    CHECK_FALSE(c->source("nic")->group("counters").delta("rx_dropped"));
    REQUIRE(c->source("rdma"));
    CHECK(c->source("rdma")->device == "mlx5_3");
    CHECK(c->source("rdma")->group("counters").delta("symbol_error") == 37u);
    CHECK(c->source("rdma")->group("counters").delta("link_downed") == 1u);
    CHECK(c->source("rdma")->group("counters").delta("port_xmit_data") == 0u);
    CHECK(c->source("rdma")->group("hw_counters").delta("np_cnp_sent") == 30u);
    CHECK(probe.take_unreadable().empty());
}

TEST_CASE("link_counter_probe: readings inside the window place the counters that moved in their intervals") {
    const auto root = unit_test::scratch_dir("link_counters_reader") / "intervals";
    fixture(root, 1000, 3, 7, 1, 50);
    transport::link_counter_probe probe(root, nic_and_port("eth7", "mlx5_3", 1));
    probe.read_interval();  // before the window: ignored
    probe.read_before();
    fixture(root, 2000, 3, 7, 1, 60);  // interval 1: traffic and congestion marks only
    probe.read_interval();
    fixture(root, 3000, 5, 9, 2, 70);  // interval 2: a flap, 2 symbol errors, a link_downed
    probe.read_interval();
    fixture(root, 4000, 5, 12, 2, 80);  // the last: 3 more symbol errors
    probe.read_after();
    const auto c = probe.counters();
    REQUIRE(c);
    CHECK(c->intervals == 3);
    const auto& nic = c->source("nic")->group("counters").intervals;
    REQUIRE(nic.count("carrier_changes"));
    CHECK(nic.at("carrier_changes").intervals == 1);
    CHECK(nic.at("carrier_changes").max_increase == 2);
    CHECK(nic.count("tx_bytes") == 0);
    const auto& port = c->source("rdma")->group("counters").intervals;
    REQUIRE(port.count("symbol_error"));
    CHECK(port.at("symbol_error").intervals == 2);
    CHECK(port.at("symbol_error").max_increase == 3);
    CHECK(port.at("link_downed").intervals == 1);
    CHECK(port.at("symbol_error").first_at_s <= c->window_s);
    CHECK(port.at("symbol_error").first_at_s > 0);
    CHECK(c->source("rdma")->group("hw_counters").intervals.at("np_cnp_sent").intervals == 3);  // congestion is followed too
    CHECK_NOTHROW(core::check_sane(*c));

    transport::link_counter_probe plain(root, nic_and_port("eth7", "", 1));  // read before and after only
    plain.read_before();
    plain.read_after();
    CHECK(plain.counters()->intervals == 0);
    CHECK(plain.counters()->source("nic")->group("counters").intervals.empty());
}

TEST_CASE("link_counter_probe: a device that is not there gives no counters and is named once per process") {
    const auto root = unit_test::scratch_dir("link_counters_reader") / "absent";
    fixture(root, 1, 0, 0, 0, 0);
    transport::link_counter_probe probe(root, nic_and_port("eth7", "mlx5_9", 1));
    probe.read_before();
    probe.read_after();
    const auto c = probe.counters();
    REQUIRE(c);
    CHECK(c->source("nic"));
    CHECK_FALSE(c->source("rdma"));  // absent, not zeros
    const auto named = probe.take_unreadable();
    REQUIRE(named.size() == 2);  // counters/ and hw_counters/
    CHECK(named[0].find("mlx5_9") != std::string::npos);
    transport::link_counter_probe again(root, nic_and_port("", "mlx5_9", 1));
    again.read_before();
    again.read_after();
    CHECK_FALSE(again.counters());
    CHECK(again.take_unreadable().empty());  // said once
}

TEST_CASE("link_counter_target: one source per kind, in the kinds' order; an empty device or unknown kind reads nothing") {
    transport::link_counter_target t;
    t.count(core::rdma_port_source_kind, "mlx5_3", 1);
    t.count(core::nic_source_kind, "eth7");
    t.count(core::nic_source_kind, "eth8");  // replaces eth7
    t.count("efa", "efa_0", 1);              // no such kind here
    REQUIRE(t.sources.size() == 2);
    CHECK(t.sources[0].kind == "nic");
    CHECK(t.sources[0].device == "eth8");
    CHECK(t.sources[1].kind == "rdma");
    t.count(core::rdma_port_source_kind, "");
    CHECK(t.sources.size() == 1);
}

}  // namespace link_counters_reader_test
