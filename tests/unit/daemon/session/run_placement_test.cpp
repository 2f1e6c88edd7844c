// Where a daemon puts a run's measuring threads (daemon/session/run_placement.hpp), what it reads
// from the host (daemon/session/cpu_topology.hpp) and from the other side's session messages.
#include "core/error.hpp"
#include "daemon/session/cpu_topology.hpp"
#include "daemon/session/run_placement.hpp"
#include "daemon/session/session_protocol.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace run_placement_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using daemon::host_cpu_facts;
using nlohmann::json;

namespace {

host_cpu_facts two_cpus(std::string boot = "boot-a") { return {{0, 1}, {{0, 0}, {1, 0}}, std::move(boot)}; }

core::run_spec spec_with(std::vector<int> initiator, std::vector<int> peer, bool busy_poll = false, std::string peer_addr = "127.0.0.1:7471") {
    core::run_spec s;
    s.peer = std::move(peer_addr);
    s.sizes = {64};
    s.tests = {core::test_kind::latency};
    s.initiator_cpus = std::move(initiator);
    s.peer_cpus = std::move(peer);
    s.busy_poll = busy_poll;
    return s;
}

json hello_from(const std::string& boot, std::vector<int> cpus) {
    return {{"placement", {{"boot_id", boot}, {"cpus", cpus}, {"pinned_by", "default"}}}};
}

std::string refusal(const core::run_spec& s, const host_cpu_facts& h) {
    try {
        daemon::check_placement_at_submission(s, h);
    } catch (const core::spec_error& e) {
        return e.what();
    }
    return {};
}

struct temp_dir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("meshperf-sys-" + std::to_string(::getpid()));
    temp_dir() { std::filesystem::create_directories(path); }
    ~temp_dir() { std::filesystem::remove_all(path); }
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel) << text;
    }
};

}  // namespace

TEST_CASE("measuring threads: 1 for latency, the streams for bandwidth, twice that for bidir") {
    core::run_spec s = spec_with({}, {});
    CHECK(daemon::measuring_threads(s) == 1);
    s.streams = 4;
    s.tests = {core::test_kind::latency, core::test_kind::bandwidth};
    CHECK(daemon::measuring_threads(s) == 4);
    s.tests.push_back(core::test_kind::bidir);
    CHECK(daemon::measuring_threads(s) == 8);
}

TEST_CASE("submission: a CPU this daemon may not use is refused, naming the CPUs it may use") {
    CHECK(refusal(spec_with({99}, {1}), two_cpus()) == "CPU 99 is not available to this meshperfd: it may use 0-1 (initiator_cpus)");
    CHECK(refusal(spec_with({0}, {1}), two_cpus()).empty());
    // The peer's CPUs are the peer's business (checked at its hello).
    CHECK(refusal(spec_with({0}, {99}), two_cpus()).empty());
    auto older = spec_with({}, {});
    older.cpus = {1, 7};
    CHECK(refusal(older, two_cpus()) == "CPU 7 is not available to this meshperfd: it may use 0-1 (cpus)");
}

TEST_CASE("submission: busy-poll with both sides on one CPU of this host is refused") {
    const auto why = refusal(spec_with({0}, {0}, true), two_cpus());
    CHECK(why.find("busy_poll (--busy-poll) with both sides pinned to CPU 0 of this host") == 0);
    CHECK(why.find("--cpu 0,1") != std::string::npos);
    CHECK(refusal(spec_with({0}, {0}, true, "localhost:7471"), two_cpus()) == why);
    CHECK(refusal(spec_with({0}, {1}, true), two_cpus()).empty());                       // apart
    CHECK(refusal(spec_with({0}, {0}, false), two_cpus()).empty());                      // blocking receive
    CHECK(refusal(spec_with({0}, {0}, true, "192.0.2.7:7470"), two_cpus()).empty());    // another host's CPU 0
    CHECK(refusal(spec_with({0}, {}, true), two_cpus()).empty());                       // the peer chooses: warned later
    auto bw = spec_with({0}, {0}, true);
    bw.tests = {core::test_kind::bandwidth};
    CHECK(refusal(bw, two_cpus()).empty());
}

TEST_CASE("names_this_host: loopback and this host's addresses, never a lookup") {
    CHECK(daemon::names_this_host("127.0.0.1:7470"));
    CHECK(daemon::names_this_host("127.3.4.5:1"));
    CHECK(daemon::names_this_host("localhost"));
    CHECK(daemon::names_this_host("[::1]:7470"));
    CHECK_FALSE(daemon::names_this_host("192.0.2.7:7470"));
    CHECK_FALSE(daemon::names_this_host("node2.example:7470"));
    CHECK_FALSE(daemon::names_this_host(":::"));
}

TEST_CASE("peer at the hello: away from the initiator's CPU on one host") {
    auto p = daemon::peer_placement(spec_with({}, {}), two_cpus(), "", hello_from("boot-a", {0}));
    CHECK(p.same_host == true);
    CHECK(p.cpus == std::vector<int>{1});
    CHECK(p.source == core::cpu_source::automatic);
    // Another host: its own first CPU.
    p = daemon::peer_placement(spec_with({}, {}), two_cpus(), "", hello_from("boot-b", {0}));
    CHECK(p.same_host == false);
    CHECK(p.cpus == std::vector<int>{0});
    // An initiator older than the field: host unknown, own default.
    p = daemon::peer_placement(spec_with({}, {}), two_cpus(), "", json::object());
    CHECK_FALSE(p.same_host.has_value());
    CHECK(p.cpus == std::vector<int>{0});
    // A daemon under taskset -c 0 has only CPU 0: it shares with the initiator.
    p = daemon::peer_placement(spec_with({}, {}), {{0}, {}, "boot-a"}, "", hello_from("boot-a", {0}));
    CHECK(p.cpus == std::vector<int>{0});
}

TEST_CASE("peer at the hello: the spec's CPUs, checked against the peer's own affinity") {
    auto p = daemon::peer_placement(spec_with({0}, {1}), two_cpus(), "", hello_from("boot-a", {0}));
    CHECK(p.cpus == std::vector<int>{1});
    CHECK(p.source == core::cpu_source::spec);
    CHECK_THROWS_WITH_AS(daemon::peer_placement(spec_with({0}, {5}), two_cpus(), "", hello_from("boot-a", {0})),
                         "CPU 5 is not available to this meshperfd: it may use 0-1 (peer_cpus)", core::spec_error);
    // --cpu 0,0: both on CPU 0, as asked.
    p = daemon::peer_placement(spec_with({0}, {0}), two_cpus(), "", hello_from("boot-a", {0}));
    CHECK(p.cpus == std::vector<int>{0});
}

TEST_CASE("initiator at hello_ok: moves off a peer that can only use the CPU it took") {
    auto p = daemon::initiator_placement(spec_with({}, {}), two_cpus(), "");
    CHECK(p.cpus == std::vector<int>{0});
    CHECK(daemon::hello_placement(p) == json{{"boot_id", "boot-a"}, {"cpus", {0}}, {"pinned_by", "default"}});
    daemon::settle_initiator_placement(p, spec_with({}, {}), "", hello_from("boot-a", {0}));
    CHECK(p.same_host == true);
    CHECK(p.cpus == std::vector<int>{1});
    // Pinned by the spec: it stays, whatever the peer does.
    auto pinned = daemon::initiator_placement(spec_with({0}, {0}), two_cpus(), "");
    daemon::settle_initiator_placement(pinned, spec_with({0}, {0}), "", hello_from("boot-a", {0}));
    CHECK(pinned.cpus == std::vector<int>{0});
    // An older peer: nothing learnt, nothing moved.
    auto old = daemon::initiator_placement(spec_with({}, {}), two_cpus(), "");
    daemon::settle_initiator_placement(old, spec_with({}, {}), "", json::object());
    CHECK_FALSE(old.same_host.has_value());
    CHECK(old.cpus == std::vector<int>{0});
}

TEST_CASE("observed placement: the CPUs the threads were seen on, their nodes, whether all were pinned") {
    daemon::run_placement p;
    p.host = {{0, 1, 2, 3}, {{0, 0}, {1, 0}, {2, 1}, {3, 1}}, "b"};
    p.cpus = {1, 2};
    p.source = core::cpu_source::automatic;
    auto s = daemon::observed_placement(p, {{true, 1, 1}, {true, 2, 2}});
    CHECK(s.cpus == std::vector<int>{1, 2});
    CHECK(s.numa_nodes == std::vector<int>{0, 1});
    CHECK(s.pinned);
    CHECK(s.source == core::cpu_source::automatic);
    // An unpinned thread that moved: both CPUs, not pinned.
    s = daemon::observed_placement(p, {{false, 0, 3}});
    CHECK(s.cpus == std::vector<int>{0, 3});
    CHECK_FALSE(s.pinned);
    CHECK(s.source == core::cpu_source::none);
    CHECK(daemon::observed_placement(p, {}).cpus.empty());
}

TEST_CASE("a point's placement at the initiator: the peer's report, or unknown from an older peer") {
    daemon::run_placement p;
    p.host = two_cpus();
    p.cpus = {0};
    p.source = core::cpu_source::automatic;
    p.same_host = true;
    const auto peer_done = json{{"placement", core::to_json(core::side_placement{{1}, {0}, true, core::cpu_source::automatic})}};
    auto where = daemon::point_placement_at_initiator(p, {{true, 0, 0}}, peer_done);
    REQUIRE(where.peer);
    CHECK(where.peer->cpus == std::vector<int>{1});
    CHECK(where.shared_cpu == false);
    where = daemon::point_placement_at_initiator(p, {{true, 0, 0}}, json{{"cpu_s", 0.1}});
    CHECK_FALSE(where.peer.has_value());
    CHECK_FALSE(where.shared_cpu.has_value());
    where = daemon::point_placement_at_initiator(p, {{true, 0, 0}}, json{{"placement", {{"cpus", "zero"}}}});
    CHECK_FALSE(where.peer.has_value());  // a malformed report is not believed
}

TEST_CASE("announced placement in a hello: boot id and CPUs, or nothing when absent or malformed") {
    const auto a = daemon::announced_placement_of(hello_from("abc", {3, 1}));
    REQUIRE(a);
    CHECK(a->boot_id == "abc");
    CHECK(a->cpus == std::vector<int>{1, 3});
    CHECK_FALSE(daemon::announced_placement_of(json::object()));
    CHECK_FALSE(daemon::announced_placement_of(json{{"placement", {{"boot_id", 7}}}}));
    CHECK_FALSE(daemon::announced_placement_of(json{{"placement", {{"boot_id", std::string(65, 'x')}}}}));
    CHECK_FALSE(daemon::announced_placement_of(json{{"placement", {{"cpus", {-4}}}}}));
}

TEST_CASE("host CPU facts: affinity, NUMA nodes from sysfs, boot id") {
    temp_dir sys;
    sys.write("devices/system/cpu/cpu0/node0", "");
    sys.write("devices/system/cpu/cpu1/node1", "");
    sys.write("devices/system/cpu/cpu2/topology", "");  // no node: unknown
    sys.write("devices/system/cpu/cpufreq/node9", "");  // not a CPU
    sys.write("class/net/eth0/device/numa_node", "1\n");
    sys.write("class/net/eth1/device/numa_node", "-1\n");
    const auto f = daemon::read_host_cpu_facts(sys.path.string());
    CHECK(f.numa_node_of == std::map<int, int>{{0, 0}, {1, 1}});
    CHECK_FALSE(f.allowed.empty());
    cpu_set_t set;
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    CHECK(f.allowed.size() == static_cast<std::size_t>(CPU_COUNT(&set)));
    CHECK(f.boot_id.size() == 36);  // a UUID
    CHECK(daemon::interface_numa_node("eth0", sys.path.string()) == 1);
    CHECK_FALSE(daemon::interface_numa_node("eth1", sys.path.string()));
    CHECK_FALSE(daemon::interface_numa_node("lo", sys.path.string()));
    CHECK_FALSE(daemon::interface_numa_node("../eth0", sys.path.string()));
    CHECK_FALSE(daemon::interface_numa_node("", sys.path.string()));
}

}  // namespace run_placement_test
