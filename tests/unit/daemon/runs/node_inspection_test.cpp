#include "daemon/runs/node_inspection.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace node_inspection_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

TEST_CASE("node inspection: CUDA ordinals from gpu_info()'s inventory, or a bare device list") {
    const json info = {{"available", true},
                       {"inventory", {{"devices", json::array({{{"index", 0}, {"pci_bus_id", "0000:19:00.0"}},
                                                               {{"index", 1}, {"pci_bus_id", "0000:3b:00.0"}}})}}}};
    const auto o = daemon::cuda_ordinals(info);
    REQUIRE(o.size() == 2);
    CHECK(o[1] == std::pair<int, std::string>{1, "0000:3b:00.0"});
    CHECK(daemon::cuda_ordinals(json{{"devices", json::array({{{"index", 3}, {"pci_bus_id", "0000:c1:00.0"}}})}}).size() == 1);
    CHECK(daemon::cuda_ordinals(json{{"available", false}, {"reason", "no driver"}}).empty());
    CHECK(daemon::cuda_ordinals(json{{"inventory", {{"devices", json::array({{{"index", "0"}}})}}}}).empty());
    CHECK(daemon::cuda_ordinals(json::array()).empty());
}

TEST_CASE("node inspection: a sysfs root that cannot be listed is UNKNOWN, never OK or a throw") {
    daemon::daemon_context ctx;
    ctx.host.hostname = "n1";
    ctx.sysfs_root = std::filesystem::temp_directory_path() / ("meshperf-no-sysfs-" + std::to_string(::getpid()));
    daemon::node_inspection_request req;
    req.expect = node::node_manifest{};
    req.expect->gpus = 8;
    const auto r = daemon::inspect_node(ctx, req, nullptr);
    CHECK(r.host == "n1");
    // Not "no rail" (WARNING) nor "0 GPUs, manifest expects 8" (CRITICAL): nothing could be read.
    CHECK(r.state == core::check_state::unknown);
    REQUIRE(r.findings.size() == 2);  // bus/pci/devices and class/net
    for (const auto& f : r.findings) {
        CHECK(f.check == "sysfs");
        CHECK(f.state == core::check_state::unknown);
        CHECK(f.message.find("cannot be listed") != std::string::npos);
    }
    // With class/net there, the PCI devices alone still make it UNKNOWN.
    std::filesystem::create_directories(ctx.sysfs_root / "class/net");
    const auto half = daemon::inspect_node(ctx, req, nullptr);
    std::filesystem::remove_all(ctx.sysfs_root);
    CHECK(half.state == core::check_state::unknown);
    REQUIRE(half.findings.size() == 1);
    CHECK(half.findings[0].subject == (ctx.sysfs_root / "bus/pci/devices").string());
}

}  // namespace node_inspection_test
