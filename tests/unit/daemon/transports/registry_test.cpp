// daemon/transports/registry: every transport core's rules name is in the daemon's registry,
// with plug-ins where it is built and a reason where it is not; an unknown name is refused
// with the list; /v1/info's transport part is built from the entries.
#include "core/error.hpp"
#include "core/transport_rules.hpp"
#include "daemon/transports/registry.hpp"

#include <doctest/doctest.h>

#include <string>

namespace registry_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using doctest::Contains;

TEST_CASE("transport registry: the names of core's rules and the daemon's entries are the same, in the same order") {
    const auto& rules = core::transport_rule_table();
    const auto& entries = daemon::transports();
    REQUIRE(rules.size() == entries.size());
    for (std::size_t i = 0; i < rules.size(); ++i) CHECK(entries[i].name == rules[i].name);
}

TEST_CASE("transport registry: a built entry has its sweep pair; one the build lacks is refused with its reason") {
    for (const auto& e : daemon::transports()) {
        CAPTURE(e.name);
        REQUIRE(e.inventory);
        const auto inv = e.inventory();
        CHECK(inv.info_fields.is_object());
        if (e.built) {
            CHECK(e.sweep.initiator);
            CHECK(e.sweep.responder);
            CHECK(&daemon::find_transport(e.name) == &e);
            if (!inv.available) CHECK_FALSE(inv.reason.empty());  // "not here, because ..."
        } else {
            CHECK_FALSE(inv.available);
            CHECK_THROWS_WITH_AS(daemon::find_transport(e.name), Contains(inv.reason.c_str()), core::spec_error);
        }
    }
    const auto& tcp = daemon::find_transport("tcp");
    CHECK(tcp.inventory().available);
    CHECK_FALSE(tcp.collective.connect_links);  // a collective over TCP moves its data over the mesh's own sockets
}

TEST_CASE("transport registry: an unknown name is refused with the names this meshperfd has") {
    CHECK_THROWS_WITH_AS(daemon::find_transport("carrier-pigeon"),
                         Contains("unknown transport 'carrier-pigeon': this meshperfd has tcp, rdma"), core::spec_error);
    CHECK_THROWS_AS(daemon::find_sweep_plugins("udp"), core::spec_error);
    CHECK_THROWS_AS(daemon::find_collective_plugin(""), core::spec_error);
}

TEST_CASE("transport registry: /v1/info lists every entry with its availability and each entry's own fields") {
    const auto info = daemon::transports_info();
    REQUIRE(info.contains("transports"));
    REQUIRE(info["transports"].size() == daemon::transports().size());
    CHECK(info["transports"][0] == nlohmann::json{{"name", "tcp"}, {"available", true}});
    const auto& rdma = info["transports"][1];
    CHECK(rdma["name"] == "rdma");
    if (!rdma["available"].get<bool>()) CHECK(rdma.contains("reason"));
    CHECK(info["rdma_devices"].is_array());  // RDMA's own field, present built or not
}

}  // namespace registry_test
