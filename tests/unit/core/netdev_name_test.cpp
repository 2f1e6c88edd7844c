// Issue 47 items 8 and 9: every name Linux gives an interface is measured, stored and shown
// (c@tl, ra"q, bytes that are not UTF-8), none escapes its sysfs directory, and every output
// (Prometheus text, JSON) stays valid UTF-8 with such a name in it.
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/counter_sources.hpp"
#include "core/link_counters.hpp"
#include "core/netdev_name.hpp"
#include "core/prometheus.hpp"
#include "core/rail_spec.hpp"
#include "core/result.hpp"
#include "core/utf8.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace netdev_name_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using nlohmann::json;

TEST_SUITE("netdev_name") {

TEST_CASE("the names Linux allows (dev_valid_name) and no others") {
    for (const auto& n : std::vector<std::string>{"eth0", "c@tl", "ra\"q", "a\\b", "{x}", "a=b,c", "ra\xff\xfe", "123456789012345", "-", "...",
                                "\x1b[31m", "enp24s0np0"})
        CHECK_MESSAGE(valid_netdev_name(n), n);
    for (const auto& n : std::vector<std::string>{"", ".", "..", "a/b", "../etc", "eth0:1", "eth 1", "tab\tx", "nl\nx", "cr\rx", "vt\vx", "ff\fx",
                                "1234567890123456", std::string("a\0b", 3)})
        CHECK_FALSE_MESSAGE(valid_netdev_name(n), n);
    // As it arrives in JSON from a peer: each byte that was not UTF-8 is U+FFFD (3 bytes) and counts as one.
    CHECK(valid_netdev_name(to_valid_utf8("ra\xff\xfe")));
    CHECK(valid_netdev_name(to_valid_utf8(std::string(15, '\xff'))));
    CHECK_FALSE(valid_netdev_name(to_valid_utf8(std::string(16, '\xff'))));
    CHECK(valid_sysfs_file_name("rx_bytes"));
    CHECK(valid_sysfs_file_name("np0:rx@x"));
    CHECK_FALSE(valid_sysfs_file_name(".."));
    CHECK_FALSE(valid_sysfs_file_name("a/b"));
    CHECK_FALSE(valid_sysfs_file_name(std::string(65, 'a')));
}

TEST_CASE("a point measured on interfaces c@tl and ra\"q reads back; a name with '/' does not") {
    for (const auto& name : std::vector<std::string>{"c@tl", "ra\"q", "ra{=},\\", to_valid_utf8("ra\xff\xfe")}) {
        point_result p;
        p.test = test_kind::bandwidth;
        p.size_bytes = 1 << 20;
        link_side_counters nic;
        nic.window_s = 0.5;
        nic.sources.push_back(nic_source(name, counter_delta({{"tx_bytes", 1}}, {{"tx_bytes", 9}})));
        p.link.initiator = nic;
        p.link.peer = nic;
        const auto back = point_result_from_json(json::parse(json_text(to_json(p))));
        REQUIRE(back.link.peer);
        CHECK(back.link.peer->source("nic")->device == name);
    }
    point_result p;
    p.test = test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    link_side_counters nic;
    nic.window_s = 0.5;
    nic.sources.push_back(nic_source("../../etc", counter_delta({{"tx_bytes", 1}}, {{"tx_bytes", 9}})));
    p.link.peer = nic;
    CHECK_THROWS_WITH_AS(point_result_from_json(to_json(p)), doctest::Contains("a name Linux does not give an interface"),
                         spec_error);
}

TEST_CASE("rails may be named as Linux names interfaces") {
    std::vector<rail_pair> rails{{"ra\"q", "c@tl", "10.0.0.1", "10.0.0.2"}, {to_valid_utf8("rb\xff"), "x=y", "10.0.1.1", "10.0.1.2"}};
    CHECK_NOTHROW(validate_rails(rails));
    rails[0].peer_name = "a/b";
    CHECK_THROWS_WITH_AS(validate_rails(rails), doctest::Contains("interface names as Linux allows them"), spec_error);
}

TEST_CASE("Prometheus label values and JSON text stay valid UTF-8 with a name that is not") {
    exposition e;
    e.declare("meshperf_x", metric_type::gauge, "help \xff");
    e.add("meshperf_x", {{"interface", "ra\xff\xfe"}}, 1);
    e.add("meshperf_x", {{"interface", "ra\xfe\xff"}}, 2);  // another series, though it prints alike
    e.add("meshperf_x", {{"interface", "ra\"q\\"}}, 3);
    const auto text = e.render();
    CHECK(is_valid_utf8(text));
    CHECK(text.find("interface=\"ra\xEF\xBF\xBD\xEF\xBF\xBD\"} 1\n") != std::string::npos);
    CHECK(text.find("interface=\"ra\\\"q\\\\\"} 3\n") != std::string::npos);
    CHECK(text.find("# HELP meshperf_x help \xEF\xBF\xBD\n") != std::string::npos);
    const json doc = {{"interface", "ra\xff\xfe"}};
    CHECK_THROWS(doc.dump());  // what type_error.316 was
    CHECK(json_text(doc) == "{\"interface\":\"ra\xEF\xBF\xBD\xEF\xBF\xBD\"}");
    CHECK(is_valid_utf8(json_text(doc, 2)));
}

}  // TEST_SUITE

}  // namespace netdev_name_test
