// The node inventory and `inspect` on sysfs fixture trees (sysfs_fixture.hpp): rails and
// their nearest GPUs in NCCL's words, and each inspect check failing where it must.
#include "core/error.hpp"
#include "node/acs.hpp"
#include "node/inspect.hpp"
#include "node/read_inventory.hpp"
#include "node/manifest.hpp"
#include "node/nic_discovery.hpp"
#include "node/pci_path.hpp"
#include "node_fixture.hpp"
#include "sysfs_fixture.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace meshperf;
using namespace meshperf::node;
using core::check_state;

namespace node_test {

gpu::pci_location at(std::string rc, std::vector<std::string> bridges, int numa) {
    gpu::pci_location l;
    l.root_complex = std::move(rc);
    l.bridges = std::move(bridges);
    l.numa_node = numa;
    l.bus_id = "0000:99:00.0";
    return l;
}

}  // namespace node_test

using namespace node_test;

TEST_CASE("the PCIe path between two positions in NCCL's words") {
    const auto gpu = at("pci0000:10", {"rp", "usp", "dsp0"}, 0);
    CHECK(path_between(gpu, at("pci0000:10", {"rp", "usp", "dsp2"}, 0)) == pci_path::pix);
    CHECK(path_between(at("pci0000:10", {"rp"}, 0), at("pci0000:10", {"rp"}, 0)) == pci_path::pix);  // one bridge holds both
    CHECK(path_between(gpu, at("pci0000:10", {"rp", "usp", "dsp1", "usp2", "dsp3"}, 0)) == pci_path::pxb);
    CHECK(path_between(gpu, at("pci0000:10", {"rp2", "usp9", "dsp9"}, 0)) == pci_path::phb);
    CHECK(path_between(gpu, at("pci0000:30", {"rp", "usp", "dsp2"}, 0)) == pci_path::node);
    CHECK(path_between(gpu, at("pci0000:90", {"rp", "usp", "dsp2"}, 1)) == pci_path::sys);
    CHECK(path_between(gpu, at("pci0000:90", {"rp", "usp", "dsp2"}, -1)) == pci_path::unknown);
    CHECK(crosses_cpu(pci_path::phb));
    CHECK_FALSE(crosses_cpu(pci_path::pxb));
    CHECK(bridges_between(gpu, at("pci0000:10", {"rp", "usp", "dsp2"}, 0)) == std::vector<std::string>{"usp", "dsp0", "dsp2"});
    CHECK(bridges_between(gpu, at("pci0000:30", {"rp"}, 0)).empty());
}

TEST_CASE("a DGX-H100-like node: 8 rails, each GPU with the NIC on its own switch (PIX)") {
    const fixture f;
    const auto inv = f.inventory();
    REQUIRE(inv.gpus.size() == 8);
    REQUIRE(inv.rails.size() == 8);  // eno1 carries the control address, lo is loopback
    CHECK(inv.control_interface == "eno1");
    CHECK(std::find_if(inv.notes.begin(), inv.notes.end(), [](const std::string& n) { return n.find("eno1") != std::string::npos; }) != inv.notes.end());
    for (const auto& s : test_fixture::dgx_switches()) {
        for (const auto& [gpu_id, nic] : {std::pair{s.gpu_a, s.netdev_a}, std::pair{s.gpu_b, s.netdev_b}}) {
            const auto& id = gpu_id;  // clang before 16 cannot capture a structured binding
            const auto g = std::find_if(inv.gpus.begin(), inv.gpus.end(), [&](const gpu_entry& e) { return e.bus_id == id; });
            REQUIRE(g != inv.gpus.end());
            REQUIRE(g->nearest_rail);
            CHECK(inv.rails[*g->nearest_rail].name == nic);
            CHECK(g->nearest_path == pci_path::pix);
            CHECK(g->equally_near.size() == 2);  // both NICs of the switch
        }
    }
    // Rails in the order people count them, whatever the string order.
    std::vector<std::string> names;
    for (const auto& r : inv.rails) names.push_back(r.name);
    CHECK(names == std::vector<std::string>{"enp21s0np0", "enp22s0np0", "enp53s0np0", "enp54s0np0", "enp149s0np0",
                                            "enp150s0np0", "enp181s0np0", "enp182s0np0"});
    const auto& r0 = inv.rails[0];
    CHECK(r0.rdma_device.rfind("mlx5_", 0) == 0);
    CHECK(r0.rdma_port == 1);
    CHECK(r0.rate_gbit == 400.0);
    CHECK(r0.rate_source == "rdma port rate");
    CHECK(r0.mtu == 9000);
    CHECK(r0.firmware == "28.39.1002");
    CHECK(r0.driver == "mlx5_core");
    CHECK(r0.addresses.size() == 1);
    CHECK(r0.nearest_gpus.size() == 1);
    // Across switches: same NUMA node is NODE, the other socket SYS.
    const auto sw = test_fixture::dgx_switches();
    const auto g0 = gpu::locate_pci_device(sw[0].gpu_a, f.root());
    REQUIRE(g0);
    CHECK(path_between(*g0, *gpu::locate_pci_device(sw[1].nic_a, f.root())) == pci_path::node);
    CHECK(path_between(*g0, *gpu::locate_pci_device(sw[2].nic_a, f.root())) == pci_path::sys);

    const auto j = to_json(inv);
    CHECK(j["rails"].size() == 8);
    CHECK(j["rails"][0]["nearest_gpus"][0]["path"] == "PIX");
    CHECK(j["gpu_rail_pairs"][0]["rail"] == sw[0].netdev_a);
    CHECK(j["gpus"][0]["pcie_link"]["max_width"] == 16);
}

TEST_CASE("the control interface stays a rail when it is the only one; down or address-less interfaces are not") {
    const fixture f;
    inventory_input in;
    in.sysfs_root = f.root();
    in.control_address = "10.0.0.5";
    in.addresses = {{"lo", "127.0.0.1", 8, true, true}, {"eno1", "10.0.0.5", 24, true, false},
                    {"enp21s0np0", "192.168.0.5", 24, false, false}};  // not IFF_UP
    const auto inv = read_inventory(in);
    REQUIRE(inv.rails.size() == 1);
    CHECK(inv.rails[0].name == "eno1");
    CHECK(inv.rails[0].rate_gbit == 1.0);
    CHECK(inv.rails[0].rate_source == "netdev speed");
    CHECK(inv.rails[0].rdma_device.empty());
    in.control_address = "0.0.0.0";  // listening everywhere: nothing is the control interface
    in.addresses.push_back({"enp22s0np0", "192.168.1.5", 24, true, false});
    CHECK(read_inventory(in).rails.size() == 2);
}

TEST_CASE("an RDMA device without a network interface (InfiniBand without IPoIB) is a rail by its RDMA name") {
    const fixture f;
    const auto sw = test_fixture::dgx_switches();
    fs::remove(f.root() / "class/net" / sw[0].netdev_a);
    rail_selection sel;
    sel.include = {"mlx5_0", sw[0].netdev_b};
    const auto inv = f.inventory(sel);
    REQUIRE(inv.rails.size() == 2);
    const auto& ib = inv.rails[1];
    CHECK(ib.name == "mlx5_0");
    CHECK(ib.netdev.empty());
    CHECK(ib.mtu == 4096);  // the port's active_mtu
    CHECK(ib.rate_gbit == 400.0);
    CHECK(ib.link_up == true);
    REQUIRE(ib.pci);
    CHECK(ib.pci->bus_id == sw[0].nic_a);
    // Both NICs of the switch are PIX from GPU A: the lower bus id, its old partner, wins
    // whatever the names' order.
    CHECK(inv.gpus[0].nearest_rail == std::optional<std::size_t>(1));
    CHECK(inv.gpus[1].nearest_rail == std::optional<std::size_t>(0));
}

TEST_CASE("a software RDMA device (Soft-RoCE) is the RDMA device of the netdev it runs over") {
    // rxe has no PCI position: its port's RoCE GIDs name its netdev (gid_attrs/ndevs), and a
    // second one says it only in `parent`. A third names an interface that does not exist.
    const auto root = fs::temp_directory_path() / fmt::format("meshperf-node-soft-rdma-{}", ::getpid());
    fs::remove_all(root);
    const auto put = [&](const fs::path& file, const std::string& text) {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    };
    for (const auto* netdev : {"rdma0", "rdma1"}) {
        put(root / "class/net" / netdev / "mtu", "9000");
        put(root / "class/net" / netdev / "operstate", "unknown");
    }
    const auto port = [&](const std::string& dev) { return root / "class/infiniband" / dev / "ports/1"; };
    for (const auto* dev : {"rxe0", "rxe1", "rxe9"}) {
        put(port(dev) / "state", "4: ACTIVE");
        put(port(dev) / "rate", "2.5 Gb/sec (1X SDR)");
        put(port(dev) / "link_layer", "Ethernet");
        put(port(dev) / "active_mtu", "4096");
    }
    put(port("rxe0") / "gid_attrs/ndevs/0", "rdma0");
    put(port("rxe0") / "gid_attrs/ndevs/1", "rdma0");
    put(root / "class/infiniband/rxe1/parent", "rdma1");
    put(port("rxe9") / "gid_attrs/ndevs/0", "nosuch0");
    const auto nics = discover_nics(root, {{"rdma0", "192.0.2.1", 24, true, false}, {"rdma1", "192.0.3.1", 24, true, false}});
    REQUIRE(nics.size() == 2);  // rxe9's netdev is not there, and it has no PCI position: not a NIC
    CHECK(nics[0].name == "rdma0");
    CHECK(nics[0].rdma_device == "rxe0");
    CHECK(nics[0].rdma_port == 1);
    CHECK(nics[0].rate_gbit == 2.5);
    CHECK(nics[0].rate_source == "rdma port rate");
    CHECK(nics[0].link_up == true);
    CHECK(nics[0].mtu == 9000);  // the netdev's, read first
    CHECK(nics[1].rdma_device == "rxe1");
    CHECK(nics[1].addresses == std::vector<std::string>{"192.0.3.1/24"});
    fs::remove_all(root);
}

TEST_CASE("the healthy fixture inspects OK, every check made") {
    const fixture f;
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::ok);
    CHECK(count(r, check_state::ok) == r.findings.size());
    // 16 links, 8 rail states, 8 affinities, 5 bridges per switch (upstream and 4 downstream
    // ports) for ACS, 4 switch uplinks.
    CHECK(r.findings.size() == 16 + 8 + 8 + 20 + 4);
    CHECK(verdict_line(r).rfind("MESHPERF INSPECT OK - node1: 8 GPUs, 8 rails | gpus=8;;;0; rails=8;;;0;", 0) == 0);
}

TEST_CASE("an x8 link that can do x16 is CRITICAL, naming the GPU") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.narrow_gpu = sw[1].gpu_b;
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::critical);
    const auto* bad = find(r, "pcie_link", sw[1].gpu_b, check_state::critical);
    REQUIRE(bad);
    CHECK(bad->message.find("x8 of x16") != std::string::npos);
    CHECK(count(r, check_state::critical) == 1);
    CHECK(verdict_line(r).find(sw[1].gpu_b) != std::string::npos);
    CHECK(verdict_line(r).size() < core::nagios_first_line_max);
}

TEST_CASE("a NIC link slower than it can run is CRITICAL") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.slow_nic = sw[3].nic_a;
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::critical);
    CHECK(find(r, "pcie_link", sw[3].nic_a, check_state::critical));
}

TEST_CASE("a link the kernel cannot read is UNKNOWN; a function without PCIe link files has no link to check") {
    const fixture f;
    const auto sw = test_fixture::dgx_switches();
    const auto dev = [&](const std::string& id) { return f.root() / "bus/pci/devices" / id; };
    for (const auto* file : {"current_link_width", "max_link_width", "current_link_speed", "max_link_speed"})
        fs::remove(dev(sw[0].nic_a) / file);
    fs::remove(dev(sw[0].nic_b) / "current_link_width");
    std::ofstream(dev(sw[1].gpu_a) / "current_link_speed") << "Unknown\n";  // what a link in training shows
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::unknown);
    const auto* none = find(r, "pcie_link", sw[0].nic_a, check_state::ok);
    REQUIRE(none);
    CHECK(none->message.find("no PCIe link") != std::string::npos);
    CHECK(find(r, "pcie_link", sw[0].nic_b, check_state::unknown));
    CHECK(find(r, "pcie_link", sw[1].gpu_a, check_state::unknown));
    CHECK(count(r, check_state::unknown) == 2);
}

TEST_CASE("an ACS redirect bit on a bridge between a GPU and its NIC is a WARNING") {
    const auto sw = test_fixture::dgx_switches();
    test_fixture::fixture_options o;
    o.acs_bridge = sw[2].downstream[0];
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::warning);
    const auto* w = find(r, "acs", sw[2].downstream[0], check_state::warning);
    REQUIRE(w);
    CHECK(w->message.find("P2P Request Redirect, P2P Completion Redirect") != std::string::npos);
    CHECK(w->message.find(sw[2].gpu_a) != std::string::npos);
    CHECK(count(r, check_state::warning) == 1);
}

TEST_CASE("configuration space a non-root reader gets (64 bytes) is UNKNOWN, not a pass") {
    test_fixture::fixture_options o;
    o.root_config = false;
    const fixture f(o);
    const auto r = inspect(f.inventory(), std::nullopt, "node1");
    CHECK(r.state == check_state::unknown);
    CHECK(count(r, check_state::unknown) == 20);
    const auto acs = read_acs(f.root(), test_fixture::dgx_switches()[0].upstream);
    CHECK(acs.state == acs_state::kind::unknown);
    CHECK(acs.why.find("64 bytes") != std::string::npos);
    CHECK(read_acs(f.root(), "0000:ee:00.0").state == acs_state::kind::unknown);  // no such file
}

TEST_CASE("the ACS walk refuses short, looping and stray capability lists") {
    std::vector<std::uint8_t> c(4096, 0);
    CHECK(parse_acs(std::span(c.data(), 256)).state == acs_state::kind::unknown);
    CHECK(parse_acs(c).state == acs_state::kind::absent);
    c[0x100] = 0x01;
    c[0x102] = 0x01;
    c[0x103] = 0x10;  // next = 0x100: loops
    CHECK(parse_acs(c).state == acs_state::kind::unknown);
    c[0x103] = 0x08;  // next = 0x080: below the extended space
    CHECK(parse_acs(c).state == acs_state::kind::unknown);
    c[0x100] = 0x0d;  // ACS right here, control with Upstream Forwarding
    c[0x106] = 0x10;
    const auto s = parse_acs(c);
    CHECK(s.state == acs_state::kind::redirects);
    CHECK(redirect_bits(s.control) == "Upstream Forwarding");
}

TEST_CASE("a GPU whose nearest rail is across the CPU is a WARNING") {
    const fixture f;
    const auto sw = test_fixture::dgx_switches();
    rail_selection sel;
    sel.exclude = {sw[0].netdev_a, sw[0].rdma_b};  // by netdev and by RDMA name
    const auto r = inspect(f.inventory(sel), std::nullopt, "node1");
    CHECK(r.inventory.rails.size() == 6);
    CHECK(r.state == check_state::warning);
    for (const auto& g : {sw[0].gpu_a, sw[0].gpu_b}) {
        const auto* w = find(r, "affinity", g, check_state::warning);
        REQUIRE(w);
        CHECK(w->message.find("(NODE)") != std::string::npos);
    }
}

TEST_CASE("rails by include pattern; a pattern matching nothing is noted; a down port is CRITICAL") {
    test_fixture::fixture_options o;
    o.down_rail = test_fixture::dgx_switches()[0].netdev_a;
    const fixture f(o);
    rail_selection sel;
    sel.include = {"mlx5_[0-3]", "ib*"};
    const auto inv = f.inventory(sel);
    CHECK(inv.rails.size() == 4);
    // Every NIC, and class/net's one file (the bonding driver's list) is not one.
    std::ofstream(f.root() / "class/net/bonding_masters") << "\n";
    CHECK(f.inventory({{"*"}, {}}).rails.size() == 10);  // 8 rails, eno1, lo
    CHECK(std::find(inv.notes.begin(), inv.notes.end(), "[rails] include pattern 'ib*' matches no NIC") != inv.notes.end());
    const auto r = inspect(inv, std::nullopt, "node1");
    CHECK(r.state == check_state::critical);
    CHECK(find(r, "rail_link", o.down_rail, check_state::critical));
}

TEST_CASE("the manifest: each mismatch named; bad manifests refused naming the key") {
    const fixture f;
    const auto m = parse_manifest("gpus = 8\nrails = 7\nrail_rate_gbit = 200\nmtu = 9000\nnic_firmware = \"28.39.1002\"\n"
                                  "gpu_driver = \"535.104.05\"\n",
                                  "node.toml");
    const auto r = inspect(f.inventory(), m, "node1");
    CHECK(r.state == check_state::critical);
    const auto* rails = find(r, "manifest", "rails", check_state::critical);
    REQUIRE(rails);
    CHECK(rails->message == "8 rails, manifest expects 7");
    CHECK(find(r, "manifest", "gpus", check_state::ok));
    const auto* rate = find(r, "manifest", "rail enp21s0np0", check_state::critical);
    REQUIRE(rate);
    CHECK(rate->message == "link rate 400 Gbit/s, manifest expects 200");
    const auto* drv = find(r, "manifest", "gpu_driver", check_state::warning);
    REQUIRE(drv);
    CHECK(drv->message == "GPU driver 550.54.15, manifest expects 535.104.05");
    CHECK(manifest_from_json(to_json(m)).rail_rate_gbit == 200.0);

    CHECK_THROWS_WITH_AS(parse_manifest("gpu = 8\n", "node.toml"), doctest::Contains("'gpu' is not a manifest key"), core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("gpus = \"8\"\n", "node.toml"), doctest::Contains("gpus must be an integer"), core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("gpus = 8 8\n", "node.toml"), doctest::Contains("not valid TOML"), core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("[gpus]\n", "node.toml"), doctest::Contains("not a manifest key"), core::spec_error);
    CHECK_THROWS_AS(load_manifest(f.root() / "no-such.toml"), core::spec_error);
    CHECK_THROWS_WITH_AS(manifest_from_json(nlohmann::json{{"mtu", "9000"}}), doctest::Contains("mtu must be an integer"), core::spec_error);
}
