// gpu::parse_cpu_list and gpu::scoped_numa_binding (the NUMA placement of --all-gpus' pinned
// buffers), on a fake sysfs node in a temporary directory.
#include "gpu/numa_binding.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <random>
#include <sched.h>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace meshperf::gpu;

TEST_CASE("cpu lists: ranges, single CPUs, the newline sysfs ends with; malformed text is empty") {
    CHECK(parse_cpu_list("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
    CHECK(parse_cpu_list("5") == std::vector<int>{5});
    CHECK(parse_cpu_list("").empty());
    CHECK(parse_cpu_list("\n").empty());
    CHECK(parse_cpu_list("3-1").empty());
    CHECK(parse_cpu_list("a-b").empty());
    CHECK(parse_cpu_list("1,,2").empty());
    CHECK(parse_cpu_list("-1").empty());
    CHECK(parse_cpu_list("0-99999").empty());  // beyond CPU_SETSIZE
}

TEST_CASE("numa binding: the thread runs on the node's CPUs inside the scope and as before after it") {
    cpu_set_t before{};
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
        if (CPU_ISSET(c, &before)) first = c;
    REQUIRE(first >= 0);
    std::random_device rd;
    const fs::path root = fs::temp_directory_path() / ("meshperf-numa-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(root / "devices/system/node/node0");
    std::ofstream(root / "devices/system/node/node0/cpulist") << first << "\n";
    {
        const scoped_numa_binding b(0, root);
        CHECK(b.bound());
        cpu_set_t now{};
        REQUIRE(sched_getaffinity(0, sizeof now, &now) == 0);
        CHECK(CPU_COUNT(&now) == 1);
        CHECK(CPU_ISSET(first, &now));
    }
    cpu_set_t after{};
    REQUIRE(sched_getaffinity(0, sizeof after, &after) == 0);
    CHECK(CPU_EQUAL(&before, &after));
    {
        const scoped_numa_binding unknown(-1, root);  // the kernel does not know the GPU's node
        CHECK_FALSE(unknown.bound());
        CHECK(unknown.note().find("unknown") != std::string::npos);
        const scoped_numa_binding absent(7, root);  // a node sysfs does not list
        CHECK_FALSE(absent.bound());
        CHECK(absent.note().find("node 7") != std::string::npos);
    }
    std::error_code ec;
    fs::remove_all(root, ec);
}
