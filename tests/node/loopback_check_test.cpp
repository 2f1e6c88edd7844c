// node/loopback_check: inspect --loopback's verdicts on RNIC loopback readings (the
// measurement itself runs on Soft-RoCE in tests/rdma-vm): a figure at or above the
// manifest's floor is OK and says its share of the port rate, below it CRITICAL; a device
// that failed is CRITICAL, one not measured for the circumstances' sake UNKNOWN, and no
// device at all UNKNOWN (asked for, not made: never a pass); the manifest key's forms.
#include "core/error.hpp"
#include "node/loopback_check.hpp"
#include "node/manifest.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace loopback_check_test {

using namespace meshperf;
using namespace meshperf::node;
using core::check_state;

namespace {

transport::rnic_loopback_reading measured(const std::string& device, double gbit) {
    transport::rnic_loopback_reading l;
    l.device = device;
    l.port_rate_gbit = 400;
    l.gbit_per_s = gbit;
    l.seconds = 0.5;
    l.bytes = static_cast<std::uint64_t>(gbit * 1e9 / 8 * 0.5);
    return l;
}

const finding& only(const inspect_result& r, const std::string& subject_part) {
    const finding* hit = nullptr;
    for (const auto& f : r.findings)
        if (f.check == "rnic_loopback" && f.subject.find(subject_part) != std::string::npos) hit = &f;
    REQUIRE(hit);
    return *hit;
}

}  // namespace

TEST_CASE("RNIC loopback: at or above the floor OK with the port share, below it CRITICAL, failures named") {
    transport::rnic_loopback_survey s;
    s.readings = {measured("mlx5_0", 380), measured("mlx5_1", 120)};
    auto failed = measured("mlx5_2", 0);
    failed.gbit_per_s.reset();
    failed.device_fault = true;
    failed.error = "mlx5_2 port 1: ibv_modify_qp RTR: Connection timed out";
    auto busy = failed;
    busy.device = "mlx5_3";
    busy.device_fault = false;
    busy.error = "RLIMIT_MEMLOCK is 64 KiB";
    s.readings.push_back(failed);
    s.readings.push_back(busy);
    node_manifest m;
    m.loopback_floor_gbit = 350;
    inspect_result r;
    add_loopback_findings(r, s, m);
    CHECK(r.state == check_state::critical);
    CHECK(only(r, "mlx5_0").state == check_state::ok);
    CHECK(only(r, "mlx5_0").message.find("380 Gbit/s (95% of the port's 400 Gbit/s)") != std::string::npos);
    CHECK(only(r, "mlx5_1").state == check_state::critical);
    CHECK(only(r, "mlx5_1").message.find("below the manifest's floor of 350 Gbit/s") != std::string::npos);
    CHECK(only(r, "mlx5_2").state == check_state::critical);
    CHECK(only(r, "mlx5_2").message == "loopback failed: mlx5_2 port 1: ibv_modify_qp RTR: Connection timed out");
    CHECK(only(r, "mlx5_3").state == check_state::unknown);
    CHECK(r.loopback.size() == 4);

    inspect_result without_floor;
    add_loopback_findings(without_floor, {{measured("mlx5_1", 120)}, ""}, std::nullopt);
    CHECK(without_floor.state == check_state::ok);  // a figure without a floor is evidence
    const auto doc = to_json(without_floor);
    CHECK(doc["loopback"][0]["device"] == "mlx5_1");
    CHECK(doc["loopback"][0]["gbit_per_s"] == doctest::Approx(120));
    CHECK(doc["perfdata"].get<std::string>().find("loopback_mlx5_1_gbit=120") != std::string::npos);
    CHECK(doc["loopback"][0]["error"].is_null());
}

TEST_CASE("RNIC loopback: no device to loop back is UNKNOWN, never a pass") {
    inspect_result r;
    add_loopback_findings(r, {{}, "no RDMA device found (the kernel has no RDMA support)"}, std::nullopt);
    CHECK(r.state == check_state::unknown);
    CHECK(only(r, "RDMA devices").message == "no loopback measured: no RDMA device found (the kernel has no RDMA support)");
    CHECK(r.loopback.empty());
}

TEST_CASE("the manifest's loopback_floor_gbit: TOML and JSON, refused when not a positive rate") {
    const auto m = parse_manifest("loopback_floor_gbit = 350\n", "node.toml");
    CHECK(*m.loopback_floor_gbit == 350.0);
    CHECK(*manifest_from_json(to_json(m)).loopback_floor_gbit == 350.0);
    CHECK_THROWS_WITH_AS(parse_manifest("loopback_floor_gbit = -3\n", "node.toml"),
                         doctest::Contains("loopback_floor_gbit must be a number of Gbit/s above 0"), core::spec_error);
    CHECK_THROWS_WITH_AS(manifest_from_json(nlohmann::json{{"loopback_floor_gbit", "fast"}}),
                         doctest::Contains("loopback_floor_gbit must be"), core::spec_error);
}

TEST_CASE("a manifest count beyond int64 is refused as given, not wrapped to -1") {
    const auto huge = nlohmann::json::parse(R"({"gpus": 18446744073709551615})");
    CHECK_THROWS_WITH_AS(manifest_from_json(huge), doctest::Contains("gpus must be 0 to 1024, not 18446744073709551615"),
                         core::spec_error);
}

}  // namespace loopback_check_test
