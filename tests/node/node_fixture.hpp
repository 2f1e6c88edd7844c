#pragma once
// The unit tests' handle on a fixture tree (sysfs_fixture.hpp): a fresh tree per test,
// removed afterwards, its inventory read as the daemon reads it, and finding lookups.
#include "node/inspect.hpp"
#include "node/read_inventory.hpp"
#include "sysfs_fixture.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace node_test {

/// A fresh fixture tree, removed afterwards.
class fixture {
public:
    explicit fixture(const meshperf::test_fixture::fixture_options& o = {}) {
        std::random_device rd;
        root_ = std::filesystem::temp_directory_path() / fmt::format("meshperf-node-{}-{}", ::getpid(), rd());
        meshperf::test_fixture::build_dgx_h100(root_, o);
    }
    ~fixture() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    fixture(const fixture&) = delete;
    fixture& operator=(const fixture&) = delete;
    const std::filesystem::path& root() const { return root_; }

    /// The host's addresses as getifaddrs would give them on such a node: eno1 carries the
    /// control address, each rail one address, lo.
    static std::vector<meshperf::node::interface_address> addresses() {
        std::vector<meshperf::node::interface_address> a{{"lo", "127.0.0.1", 8, true, true}, {"eno1", "10.0.0.5", 24, true, false}};
        int k = 0;
        for (const auto& s : meshperf::test_fixture::dgx_switches())
            for (const auto& n : {s.netdev_a, s.netdev_b}) a.push_back({n, fmt::format("192.168.{}.5", k++), 24, true, false});
        return a;
    }

    meshperf::node::node_inventory inventory(meshperf::node::rail_selection sel = {}) const {
        meshperf::node::inventory_input in;
        in.sysfs_root = root_;
        in.addresses = addresses();
        in.selection = std::move(sel);
        in.control_address = "10.0.0.5";
        return meshperf::node::read_inventory(in);
    }

private:
    std::filesystem::path root_;
};

/// The first finding of `check` at `state` whose subject contains `subject_part`, or null.
inline const meshperf::node::finding* find(const meshperf::node::inspect_result& r, const std::string& check,
                                           const std::string& subject_part, meshperf::core::check_state state) {
    for (const auto& f : r.findings)
        if (f.check == check && f.state == state && f.subject.find(subject_part) != std::string::npos) return &f;
    return nullptr;
}

/// How many findings are at `s`.
inline std::size_t count(const meshperf::node::inspect_result& r, meshperf::core::check_state s) {
    return static_cast<std::size_t>(
        std::count_if(r.findings.begin(), r.findings.end(), [&](const meshperf::node::finding& f) { return f.state == s; }));
}

}  // namespace node_test
