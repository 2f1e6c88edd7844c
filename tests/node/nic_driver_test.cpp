// The NIC driver and its module version in the inventory and the manifest's nic_driver:
// an out-of-tree driver's version read and compared rail by rail (a mismatch is a WARNING
// naming the rail), an in-tree driver without a module version UNKNOWN only when the
// manifest asks for it, and the key's one form enforced by both parsers.
#include "core/error.hpp"
#include "node/inspect.hpp"
#include "node/manifest.hpp"
#include "node_fixture.hpp"
#include "sysfs_fixture.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace nic_driver_test {

namespace fs = std::filesystem;
using namespace meshperf;
using namespace meshperf::node;
using core::check_state;
using node_test::count;
using node_test::find;
using node_test::fixture;

namespace {

test_fixture::fixture_options out_of_tree(const std::string& version) {
    test_fixture::fixture_options o;
    o.nic_driver_version = version;
    return o;
}

std::size_t driver_findings(const inspect_result& r, check_state s) {
    std::size_t n = 0;
    for (const auto& f : r.findings) n += f.check == "manifest" && f.state == s && f.message.find("driver") == 0 ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("an out-of-tree NIC driver's module version is in the inventory, its JSON and the table") {
    const fixture f(out_of_tree("24.10-1.1.4"));
    const auto inv = f.inventory();
    REQUIRE(inv.rails.size() == 8);
    for (const auto& r : inv.rails) {
        CHECK(r.driver == "mlx5_core");
        CHECK(r.driver_version == "24.10-1.1.4");
    }
    const auto j = to_json(inv);
    CHECK(j["rails"][0]["driver"] == "mlx5_core");
    CHECK(j["rails"][0]["driver_version"] == "24.10-1.1.4");
    const auto text = render_text(inspect(inv, std::nullopt, "node1"), true);
    CHECK(text.find("enp21s0np0     28.39.1002     mlx5_core 24.10-1.1.4\n") != std::string::npos);
}

TEST_CASE("an in-tree NIC driver has no module version: null, never guessed, and OK while no manifest asks") {
    const fixture f;
    const auto inv = f.inventory();
    REQUIRE(!inv.rails.empty());
    CHECK(inv.rails[0].driver == "mlx5_core");
    CHECK(inv.rails[0].driver_version.empty());
    CHECK(to_json(inv)["rails"][0]["driver_version"].is_null());
    CHECK(render_text(inspect(inv, std::nullopt, "node1"), true).find("mlx5_core (no module version)") != std::string::npos);
    const auto without = inspect(inv, parse_manifest("nic_firmware = \"28.39.1002\"\n", "node.toml"), "node1");
    CHECK(without.state == check_state::ok);

    const auto asked = inspect(inv, parse_manifest("nic_driver = \"mlx5_core 24.10-1.1.4\"\n", "node.toml"), "node1");
    CHECK(asked.state == check_state::unknown);
    CHECK(driver_findings(asked, check_state::unknown) == 8);
    CHECK(count(asked, check_state::unknown) == 8);
    const auto* u = find(asked, "manifest", "rail enp21s0np0", check_state::unknown);
    REQUIRE(u);
    CHECK(u->message.find("driver mlx5_core has no module version") == 0);
    CHECK(u->message.find("in-tree driver has none") != std::string::npos);
    CHECK(u->message.find("manifest expects mlx5_core 24.10-1.1.4") != std::string::npos);
}

TEST_CASE("nic_driver: the same version is OK, another version or another driver a WARNING naming the rail") {
    const fixture f(out_of_tree("24.10-1.1.4"));
    const auto inv = f.inventory();
    const auto same = inspect(inv, parse_manifest("nic_driver = \"mlx5_core 24.10-1.1.4\"\n", "node.toml"), "node1");
    CHECK(same.state == check_state::ok);
    CHECK(driver_findings(same, check_state::ok) == 8);

    const auto older = inspect(inv, parse_manifest("nic_driver = \"mlx5_core 23.10-0.5.5.0\"\n", "node.toml"), "node1");
    CHECK(older.state == check_state::warning);
    CHECK(count(older, check_state::warning) == 8);
    const auto* w = find(older, "manifest", "rail enp149s0np0", check_state::warning);
    REQUIRE(w);
    CHECK(w->message == "driver mlx5_core 24.10-1.1.4, manifest expects mlx5_core 23.10-0.5.5.0");
    CHECK(verdict_line(older).find("WARNING") != std::string::npos);

    const auto other = inspect(inv, parse_manifest("nic_driver = \"bnxt_en 1.10.3\"\n", "node.toml"), "node1");
    const auto* o = find(other, "manifest", "rail enp21s0np0", check_state::warning);
    REQUIRE(o);
    CHECK(o->message == "driver mlx5_core 24.10-1.1.4, manifest expects bnxt_en 1.10.3");
}

TEST_CASE("the driver's module is the one its module link names; a NIC without a driver is UNKNOWN when asked") {
    const fixture f;
    const auto sw = test_fixture::dgx_switches();
    // An OFED build whose module is named apart from its driver.
    fs::remove(f.root() / "bus/pci/drivers/mlx5_core/module");
    fs::create_directories(f.root() / "module/mlx5_core_ofed");
    std::ofstream(f.root() / "module/mlx5_core_ofed/version") << "24.10-1.1.4\n";
    fs::create_directory_symlink("../../../../module/mlx5_core_ofed", f.root() / "bus/pci/drivers/mlx5_core/module");
    fs::remove(f.root() / "bus/pci/devices" / sw[3].nic_b / "driver");  // unbound
    const auto inv = f.inventory();
    CHECK(inv.rails[0].driver_version == "24.10-1.1.4");
    const auto r = inspect(inv, parse_manifest("nic_driver = \"mlx5_core 24.10-1.1.4\"\n", "node.toml"), "node1");
    CHECK(r.state == check_state::unknown);
    CHECK(count(r, check_state::unknown) == 1);
    const auto* u = find(r, "manifest", "rail " + sw[3].netdev_b, check_state::unknown);
    REQUIRE(u);
    CHECK(u->message.find("driver unknown") == 0);
}

TEST_CASE("nic_driver's one form, \"NAME VERSION\", in TOML and JSON; the known keys name it") {
    const auto m = parse_manifest("nic_driver = \"  mlx5_core   24.10-1.1.4 \"\n", "node.toml");
    CHECK(m.nic_driver == "mlx5_core 24.10-1.1.4");
    CHECK(to_json(m)["nic_driver"] == "mlx5_core 24.10-1.1.4");
    CHECK(manifest_from_json(to_json(m)).nic_driver == "mlx5_core 24.10-1.1.4");
    CHECK_THROWS_WITH_AS(parse_manifest("nic_driver = \"24.10-1.1.4\"\n", "node.toml"),
                         doctest::Contains("node.toml: nic_driver must be the driver's name and its module version"),
                         core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("nic_driver = \"mlx5_core 24.10 extra\"\n", "node.toml"),
                         doctest::Contains("nic_driver must be"), core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("nic_driver = 24\n", "node.toml"), doctest::Contains("nic_driver must be a string"),
                         core::spec_error);
    CHECK_THROWS_WITH_AS(manifest_from_json(nlohmann::json{{"nic_driver", "mlx5_core"}}),
                         doctest::Contains("expect: nic_driver must be the driver's name"), core::spec_error);
    CHECK_THROWS_WITH_AS(manifest_from_json(nlohmann::json{{"nic_driver", 5}}), doctest::Contains("nic_driver must be a non-empty string"),
                         core::spec_error);
    CHECK_THROWS_WITH_AS(parse_manifest("nic_drivers = \"x 1\"\n", "node.toml"),
                         doctest::Contains("(known: gpus, rails, rail_rate_gbit, mtu, nic_firmware, nic_driver, gpu_driver, "
                                           "loopback_floor_gbit, h2d_floor_gb_per_s, d2h_floor_gb_per_s)"),
                         core::spec_error);
}

}  // namespace nic_driver_test
