// The PCIe links on the paths from GPUs and rail NICs to their root complex: a switch
// uplink trained narrower or slower than both of its ends can do is one CRITICAL finding
// naming the bridge and every device behind it; a link trained at what the weaker end can
// do is OK, for a switch uplink and for a device's own link alike; a bridge without link
// attributes is no PCIe link, an unreadable one UNKNOWN.
#include "node/inspect.hpp"
#include "node/inspect_textfile.hpp"
#include "node/pcie_path_links.hpp"
#include "node_fixture.hpp"
#include "sysfs_fixture.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace bridge_link_test {

namespace fs = std::filesystem;
using namespace meshperf;
using namespace meshperf::node;
using core::check_state;
using node_test::count;
using node_test::find;
using node_test::fixture;

namespace {

std::size_t uplink_findings(const inspect_result& r) {
    std::size_t n = 0;
    for (const auto& f : r.findings) n += f.check == "pcie_link" && f.subject.rfind("bridge ", 0) == 0 ? 1 : 0;
    return n;
}

/// Retrains `ids` (the ends of one link) at x4 and returns the CRITICAL pcie_link finding
/// on `subject`, or "" when there is none.
std::string critical_at_x4(const fixture& f, const std::vector<std::string>& ids, const std::string& subject) {
    for (const auto& id : ids) std::ofstream(f.root() / "bus/pci/devices" / id / "current_link_width") << "4\n";
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    const auto* bad = find(r, "pcie_link", subject, check_state::critical);
    return bad ? bad->message : std::string();
}

}  // namespace

TEST_CASE("the links of each path, each once: the switch uplinks and the devices' own links with their ports") {
    const fixture f;
    const auto inv = f.inventory();
    const auto sw = test_fixture::dgx_switches();
    // Per switch: root port -> upstream port, and each downstream port -> its GPU or NIC.
    REQUIRE(inv.path_links.size() == 4 * (1 + 4));
    const auto* up = link_below(inv.path_links, sw[0].upstream);
    REQUIRE(up);
    CHECK(up->above == sw[0].root_port);
    CHECK(up->bridge_below);
    CHECK(up->behind == std::vector<std::string>{"GPU " + sw[0].gpu_a, "GPU " + sw[0].gpu_b, "rail " + sw[0].netdev_a,
                                                 "rail " + sw[0].netdev_b});
    const auto* gpu = link_below(inv.path_links, sw[0].gpu_a);
    REQUIRE(gpu);
    CHECK(gpu->above == sw[0].downstream[0]);
    CHECK_FALSE(gpu->bridge_below);
    CHECK(gpu->behind == std::vector<std::string>{"GPU " + sw[0].gpu_a});
    const auto j = to_json(inv);
    CHECK(j["pcie_path_links"].size() == 20);
    CHECK(j["pcie_path_links"][0]["below_link"]["max_width"] == 16);
}

TEST_CASE("a switch uplink at x8 that can do x16 is one CRITICAL finding naming the bridge and the devices behind it") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.narrow_uplink = sw[1].upstream;  // both ends, root port and upstream port, read x8
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::critical);
    CHECK(count(r, check_state::critical) == 1);
    const auto* bad = find(r, "pcie_link", "bridge " + sw[1].upstream, check_state::critical);
    REQUIRE(bad);
    CHECK(bad->message.find("PCIe link to " + sw[1].root_port + " downgraded to x8 of x16 lanes") == 0);
    for (const auto& d : {"GPU " + sw[1].gpu_a, "GPU " + sw[1].gpu_b, "rail " + sw[1].netdev_a, "rail " + sw[1].netdev_b})
        CHECK(bad->message.find(d) != std::string::npos);
    CHECK(bad->message.find(sw[0].gpu_a) == std::string::npos);  // another switch's GPU is not behind it
    // The devices' own links are not at fault: they read x16.
    CHECK(find(r, "pcie_link", sw[1].gpu_a, check_state::ok));
    const auto line = verdict_line(r);
    CHECK(line.find("bridge " + sw[1].upstream) != std::string::npos);
    CHECK(line.size() < core::nagios_first_line_max);
    const auto text = render_text(r, false);
    CHECK(text.find("pcie_" + sw[1].upstream + "_lanes=8;;16:;0;16") != std::string::npos);
    CHECK(text.find("pcie_" + sw[0].upstream + "_lanes=16;;16:;0;16") != std::string::npos);
    const auto prom = inspect_textfile(to_json(r), 0);
    CHECK(prom.find("device=\"" + sw[1].upstream + "\",kind=\"bridge\",bound=\"current\"} 8\n") != std::string::npos);
    CHECK(prom.find("device=\"" + sw[1].upstream + "\",kind=\"bridge\",bound=\"max\"} 16\n") != std::string::npos);
}

TEST_CASE("a switch uplink slower than both ends can run is CRITICAL; an unreadable one UNKNOWN") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.links[sw[2].upstream] = {16, 16, 16, 32};
    o.links[sw[2].root_port] = {16, 16, 16, 32};
    const fixture f(o);
    std::ofstream(f.root() / "bus/pci/devices" / sw[3].upstream / "current_link_width") << "Unknown\n";
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::critical);
    const auto* slow = find(r, "pcie_link", "bridge " + sw[2].upstream, check_state::critical);
    REQUIRE(slow);
    CHECK(slow->message.find("at 16 of 32 GT/s") != std::string::npos);
    const auto* unknown = find(r, "pcie_link", "bridge " + sw[3].upstream, check_state::unknown);
    REQUIRE(unknown);
    CHECK(unknown->message.find("not fully readable") != std::string::npos);
    CHECK(count(r, check_state::critical) == 1);
    CHECK(count(r, check_state::unknown) == 1);
}

TEST_CASE("a bridge that can do more than the port at the other end, trained at what that port can do, is OK") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    // A root port that can do x8 at 16 GT/s above a switch that can do x16 at 32 GT/s.
    o.links[sw[0].root_port] = {8, 8, 16, 16};
    o.links[sw[0].upstream] = {8, 16, 16, 32};
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::ok);
    const auto* ok = find(r, "pcie_link", "bridge " + sw[0].upstream, check_state::ok);
    REQUIRE(ok);
    CHECK(ok->message.find("port " + sw[0].root_port + " at the other end can do x8 at 16 GT/s") != std::string::npos);
    CHECK(render_text(r, false).find("pcie_" + sw[0].upstream + "_lanes=8;;8:;0;8") != std::string::npos);
    // The same switch trained at x4 is below what both ends can do.
    CHECK(critical_at_x4(f, {sw[0].root_port, sw[0].upstream}, "bridge " + sw[0].upstream).find("downgraded to x4 of x8 lanes") !=
          std::string::npos);
}

TEST_CASE("a GPU that can do x16 below a port that can do x8, trained at x8, is OK (no false alarm)") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.links[sw[2].downstream[0]] = {8, 8, 32, 32};
    o.links[sw[2].gpu_a] = {8, 16, 32, 32};
    o.links[sw[2].downstream[2]] = {16, 16, 16, 16};  // a Gen4 slot below a Gen5 NIC
    o.links[sw[2].nic_a] = {16, 16, 16, 32};
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::ok);
    const auto* gpu = find(r, "pcie_link", "GPU " + sw[2].gpu_a, check_state::ok);
    REQUIRE(gpu);
    CHECK(gpu->message == "PCIe link x8 at 32 GT/s (can do x16 at 32 GT/s); port " + sw[2].downstream[0] +
                              " at the other end can do x8 at 32 GT/s");
    CHECK(find(r, "pcie_link", sw[2].nic_a, check_state::ok));
    CHECK(render_text(r, false).find("pcie_" + sw[2].gpu_a + "_lanes=8;;8:;0;8") != std::string::npos);
    // At x4 it is downgraded against x8, what both ends can do.
    CHECK(critical_at_x4(f, {sw[2].downstream[0], sw[2].gpu_a}, "GPU " + sw[2].gpu_a).find("downgraded to x4 of x8 lanes") !=
          std::string::npos);
}

TEST_CASE("a bridge without link attributes is no PCIe link: not checked, and no cap on the link below it") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.links[sw[1].upstream] = {8, 16, 32, 32};  // no x8 root port to excuse it
    const fixture f(o);
    const auto root = f.root() / "bus/pci/devices";
    for (const auto* file : {"current_link_width", "max_link_width", "current_link_speed", "max_link_speed"}) {
        fs::remove(root / sw[0].upstream / file);
        fs::remove(root / sw[1].root_port / file);
    }
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(uplink_findings(r) == 3);  // switch 0's uplink has no lower end to read
    CHECK_FALSE(find(r, "pcie_link", "bridge " + sw[0].upstream, check_state::ok));
    CHECK(find(r, "pcie_link", "bridge " + sw[1].upstream, check_state::critical));
    CHECK(count(r, check_state::critical) == 1);
}

}  // namespace bridge_link_test
