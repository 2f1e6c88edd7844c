// --memory cuda:auto over rails (client/support/rail_memory.hpp): each rail's memory on
// the GPU nearest its NIC, read from two DGX-H100-like fixture nodes as their daemons'
// GET /v1/info would list them, and the errors that name the rail without one.
#include "client/support/rail_match.hpp"
#include "client/support/rail_memory.hpp"
#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "node_fixture.hpp"

#include <doctest/doctest.h>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

using meshperf::client::assign_nearest_gpus;
using meshperf::client::match_rails;
using nlohmann::json;
using node_test::fixture;
namespace core = meshperf::core;
namespace node = meshperf::node;
namespace test_fixture = meshperf::test_fixture;

namespace {

/// One fixture node's /v1/info rails: its rail addresses end in `host` (192.168.k.HOST),
/// CUDA ordinals given by `cuda_of_bus` (none: CUDA unusable there).
json info_rails(const fixture& f, int host, const std::map<std::string, int>& cuda_of_bus) {
    node::inventory_input in;
    in.sysfs_root = f.root();
    in.control_address = "10.0.0.5";
    for (auto a : fixture::addresses()) {
        if (a.interface.rfind("enp", 0) == 0) a.address = a.address.substr(0, a.address.rfind('.') + 1) + std::to_string(host);
        in.addresses.push_back(a);
    }
    for (const auto& [bus, index] : cuda_of_bus) in.cuda_devices.emplace_back(index, bus);
    return node::rails_json(node::read_inventory(in));
}

/// CUDA ordinals not in bus order (CUDA_DEVICE_ORDER=FASTEST_FIRST does that): GPU k of the
/// switches' order is cuda:(7 - k).
std::map<std::string, int> reversed_ordinals() {
    std::map<std::string, int> m;
    int k = 0;
    for (const auto& s : test_fixture::dgx_switches())
        for (const auto& g : {s.gpu_a, s.gpu_b}) m[g] = 7 - k++;
    return m;
}

std::string error_of(std::vector<core::rail_pair> rails, const json& a, const json& b, meshperf::client::nearest_gpu_request want) {
    try {
        assign_nearest_gpus(rails, a, b, want, "initiator A", "peer B");
    } catch (const core::spec_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("cuda:auto puts each rail of two DGX-H100-like nodes on the GPU behind its NIC's PCIe switch, at both ends") {
    const fixture fa, fb;
    const auto ordinals = reversed_ordinals();
    const auto a = info_rails(fa, 5, ordinals), b = info_rails(fb, 6, ordinals);
    auto m = match_rails(a, b, {}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 8);
    const auto lines = assign_nearest_gpus(m.rails, a, b, {true, true}, "initiator A", "peer B");
    REQUIRE(lines.size() == 8);
    // The GPU each NIC shares its switch with (PIX), as the fixture builds them.
    std::map<std::string, std::string> gpu_of_netdev;
    for (const auto& s : test_fixture::dgx_switches()) {
        gpu_of_netdev[s.netdev_a] = s.gpu_a;
        gpu_of_netdev[s.netdev_b] = s.gpu_b;
    }
    for (std::size_t k = 0; k < m.rails.size(); ++k) {
        const auto& r = m.rails[k];
        const auto expected = fmt::format("cuda:{}", ordinals.at(gpu_of_netdev.at(r.name)));
        CHECK(r.local_memory == expected);
        CHECK(r.peer_memory == fmt::format("cuda:{}", ordinals.at(gpu_of_netdev.at(r.peer_name))));
        CHECK(lines[k].find(expected) != std::string::npos);
        CHECK(lines[k].find("PIX") != std::string::npos);
    }
    // Eight rails on eight different GPUs at each end.
    std::set<std::string> local, peer;
    for (const auto& r : m.rails) {
        local.insert(r.local_memory);
        peer.insert(r.peer_memory);
    }
    CHECK(local.size() == 8);
    CHECK(peer.size() == 8);

    // The spec with them passes the checks, round-trips through JSON, and each side reads its own.
    core::run_spec s;
    s.peer = "192.0.2.2:7470";
    s.tests = {core::test_kind::bandwidth};
    s.sizes = {1 << 20};
    s.local_memory = s.remote_memory = "cuda:auto";
    s.rails = m.rails;
    CHECK_NOTHROW(core::validate(s));
    const auto back = core::run_spec_from_json(core::to_json(s));
    REQUIRE(back.rails.size() == 8);
    CHECK(back.rails[3].local_memory == m.rails[3].local_memory);
    CHECK(back.rails[3].peer_memory == m.rails[3].peer_memory);
    CHECK(core::side_memories(back, true)[3] == m.rails[3].local_memory);
    CHECK(core::side_memories(back, false)[3] == m.rails[3].peer_memory);
    CHECK(core::uses_gpu_memory(back));
}

TEST_CASE("cuda:auto at one end leaves the other end's memory to the run") {
    const fixture fa, fb;
    const auto a = info_rails(fa, 5, reversed_ordinals()), b = info_rails(fb, 6, reversed_ordinals());
    auto m = match_rails(a, b, {"enp21s0np0", ""}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 1);
    const auto lines = assign_nearest_gpus(m.rails, a, b, {true, false}, "initiator A", "peer B");
    CHECK(m.rails[0].local_memory == "cuda:7");  // the first switch's first GPU
    CHECK(m.rails[0].peer_memory.empty());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("peer") == std::string::npos);
    CHECK(assign_nearest_gpus(m.rails, a, b, {false, false}, "initiator A", "peer B").empty());
}

TEST_CASE("cuda:auto refuses a rail without a usable GPU near it, naming the rail and the side") {
    const fixture fa, fb;
    const auto a = info_rails(fa, 5, reversed_ordinals());
    const auto b_without_cuda = info_rails(fb, 6, {});  // CUDA unusable at the peer: no ordinals
    auto m = match_rails(a, b_without_cuda, {"enp53s0np0", ""}, "initiator A", "peer B");
    REQUIRE(m.rails.size() == 1);
    const auto no_index = error_of(m.rails, a, b_without_cuda, {true, true});
    CHECK(no_index.find("rail enp53s0np0 of peer B") != std::string::npos);
    CHECK(no_index.find("no CUDA index") != std::string::npos);
    CHECK(error_of(m.rails, a, b_without_cuda, {true, false}).empty());  // the initiator's side alone is fine

    // A rail whose nearest_gpus is empty (a storage NIC, no GPU paired with it).
    json bare = json::array({{{"name", "ens9"}, {"nearest_gpus", json::array()}}});
    core::rail_pair r;
    r.name = "ens9";
    r.peer_name = "ens9";
    const auto none = error_of({r}, bare, bare, {true, true});
    CHECK(none.find("initiator A has no GPU near rail ens9") != std::string::npos);
    CHECK(none.find("--rails NAME") != std::string::npos);
    // A rail the side does not list at all.
    CHECK(error_of({r}, json::array(), bare, {true, false}).find("does not list rail ens9") != std::string::npos);
}

TEST_CASE("a spec with cuda:auto needs rails, each with that side's memory; rail memories are checked") {
    core::run_spec s;
    s.peer = "192.0.2.2:7470";
    s.tests = {core::test_kind::bandwidth};
    s.sizes = {1 << 20};
    s.local_memory = "cuda:auto";
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("give --rails"), core::spec_error);
    core::rail_pair r;
    r.name = "ra0";
    r.peer_name = "rb0";
    r.local_address = "10.60.0.1";
    r.peer_address = "10.60.0.2";
    s.rails = {r};
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("rail ra0 has no local_memory"), core::spec_error);
    s.rails[0].local_memory = "cuda:2";
    CHECK_NOTHROW(core::validate(s));
    CHECK(core::side_memories(s, true) == std::vector<std::string>{"cuda:2"});
    CHECK(core::side_memories(s, false) == std::vector<std::string>{"host"});
    s.rails[0].peer_memory = "gpu7";
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("rail ra0's peer_memory 'gpu7' is not a memory domain"), core::spec_error);
    s.rails[0].peer_memory = "cuda:auto";  // a rail's memory is a GPU, never "auto" again
    CHECK_THROWS_AS(core::validate(s), core::spec_error);
    // GPU memory on a rail brings the RDMA GPU-memory rules with it.
    s.rails[0].peer_memory.clear();
    s.transport = "rdma";
    s.verify = true;
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("--verify with GPU memory over RDMA"), core::spec_error);
    // Without cuda:auto the rails carry no memory fields in JSON (older daemons refuse unknown ones).
    core::rail_pair plain = r;
    CHECK_FALSE(core::to_json(plain).contains("local_memory"));
}
