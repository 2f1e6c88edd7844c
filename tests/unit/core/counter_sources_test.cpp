// core/counter_sources: the kinds table; an end's leading source (the RDMA port before the
// NIC) speaks for its name; a source's groups by name; a target reads each kind once.
#include "core/counter_sources.hpp"
#include "core/counter_verdicts.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace counter_sources_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

TEST_CASE("counter sources: each kind has a key, a device field, a root and its groups") {
    for (const auto& k : counter_source_kinds()) {
        CAPTURE(k.key);
        CHECK_FALSE(k.key.empty());
        CHECK_FALSE(k.device_field.empty());
        CHECK(k.root.find("{device}") != std::string_view::npos);
        CHECK(k.has_port == (k.root.find("{port}") != std::string_view::npos));
        CHECK_FALSE(k.groups.empty());
        CHECK(find_counter_source_kind(k.key) == &k);
    }
    CHECK(find_counter_source_kind("efa") == nullptr);
}

TEST_CASE("counter sources: the RDMA port leads the NIC; groups by name; an unknown group is an error") {
    link_side_counters side;
    side.window_s = 1;
    side.sources.push_back(nic_source("eth3", counter_delta({{"tx_bytes", 0}}, {{"tx_bytes", 4000}})));
    CHECK(leading_source(side)->where() == "eth3");
    side.sources.push_back(rdma_port_source("mlx5_3", 1, counter_delta({{"port_xmit_data", 0}}, {{"port_xmit_data", 250}}), {}));
    CHECK(leading_source(side)->where() == "mlx5_3 port 1");
    CHECK(side.source("rdma")->group("counters").delta("port_xmit_data") == 250u);
    CHECK(side.source("rdma")->group("hw_counters").deltas.empty());
    CHECK_THROWS_AS((void)side.source("nic")->group("hw_counters"), std::out_of_range);
    CHECK(side.source("efa") == nullptr);
    // The JSON keys stay the kinds' keys, the devices under their own field names.
    const auto j = to_json(side);
    CHECK(j["nic"]["interface"] == "eth3");
    CHECK(j["rdma"]["device"] == "mlx5_3");
    CHECK(j["rdma"]["port"] == 1);
    const auto back = link_side_counters_from_json(j);
    REQUIRE(back.sources.size() == 2);
    CHECK(back.sources[0].kind == "nic");
    CHECK(back.sources[1].kind == "rdma");
}

}  // namespace counter_sources_test
