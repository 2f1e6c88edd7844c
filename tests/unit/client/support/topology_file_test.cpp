#include "client/support/daemon_client.hpp"
#include "client/support/topology_file.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace topology_file_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::client;

namespace {

/// The exit code and message of what `f` throws (0 and "" when it does not).
template <class F>
std::pair<int, std::string> refusal(F f) {
    try {
        f();
    } catch (const client_error& e) {
        return {e.code(), e.what()};
    }
    return {0, ""};
}

}  // namespace

TEST_CASE("topology file: hosts grouped by the first label, or by --group-by") {
    const auto entries = parse_topology_text("# leaf and rack\nnode1 leaf=l1 rack=r1\n\nnode2:7480 leaf=l2 rack=r1  # spine 2\n"
                                             "10.0.0.3 leaf=l1 rack=r2\n",
                                             "topo.txt");
    REQUIRE(entries.size() == 3);
    CHECK(entries[1].line == 4);
    const std::vector<std::string> hosts{"10.0.0.3:7470", "node1", "node2:7480"};
    const auto by_leaf = group_hosts(entries, hosts, "", "topo.txt");
    CHECK(by_leaf.key == "leaf");
    CHECK(by_leaf.group_names == std::vector<std::string>{"l1", "l2"});
    CHECK(by_leaf.group_of == std::vector<std::size_t>{0, 0, 1});
    const auto by_rack = group_hosts(entries, hosts, "rack", "topo.txt");
    CHECK(by_rack.group_names == std::vector<std::string>{"r2", "r1"});
    CHECK(by_rack.group_of == std::vector<std::size_t>{0, 1, 1});
}

TEST_CASE("topology file: hosts left out, unknown hosts and missing labels are named, exit 2") {
    const auto entries = parse_topology_text("a leaf=l1\nb leaf=l1\nstranger leaf=l2\nc rack=r1\n", "t");
    const std::vector<std::string> hosts{"a", "b", "c", "d"};
    const auto [code, message] = refusal([&] { group_hosts(entries, hosts, "", "t"); });
    CHECK(code == exit_usage);
    CHECK(message.find("leaves out 1 host(s) of --hosts: d") != std::string::npos);
    CHECK(message.find("not in --hosts: stranger") != std::string::npos);
    CHECK(message.find("have no label leaf: c") != std::string::npos);
}

TEST_CASE("topology file: malformed lines are refused with their line number") {
    CHECK(refusal([] { parse_topology_text("a leaf\n", "t"); }).second.find("t line 1: 'leaf' is not a label") != std::string::npos);
    CHECK(refusal([] { parse_topology_text("a\n", "t"); }).second.find("has no labels") != std::string::npos);
    CHECK(refusal([] { parse_topology_text("a x=1\nb x=1\na:7470 x=2\n", "t"); }).second.find("t line 3: host a:7470 is already on line 1") !=
          std::string::npos);
    CHECK(refusal([] { parse_topology_text("a x=1 x=2\n", "t"); }).second.find("label x is given twice") != std::string::npos);
    CHECK(refusal([] { parse_topology_text("# nothing\n", "t"); }).first == exit_usage);
    CHECK(refusal([] { read_topology("/nonexistent/topology.txt", std::vector<std::string>{"a"}, ""); }).first == exit_usage);
}

}  // namespace topology_file_test
