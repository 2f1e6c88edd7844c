#include "daemon/session/cpu_topology.hpp"

#include "core/netdev_name.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <unistd.h>

namespace meshperf::daemon {

namespace fs = std::filesystem;

namespace {

// A number made of digits only (what sysfs writes), or -1.
int digits(std::string_view s) {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return -1;
    return std::stoi(std::string(s));
}

std::vector<int> affinity_of_process() {
    // Large enough for any kernel's NR_CPUS (8192); the kernel says EINVAL when too small.
    for (int n : {1024, 8192}) {
        cpu_set_t* set = CPU_ALLOC(n);
        if (!set) return {};
        const auto size = CPU_ALLOC_SIZE(n);
        CPU_ZERO_S(size, set);
        std::vector<int> out;
        // The main thread's mask: what the daemon was started with. Session and stream
        // threads could have been pinned since; the process id names the main thread.
        if (::sched_getaffinity(::getpid(), size, set) == 0)
            for (int c = 0; c < n; ++c)
                if (CPU_ISSET_S(c, size, set)) out.push_back(c);
        CPU_FREE(set);
        if (!out.empty()) return out;
    }
    return {};
}

}  // namespace

host_cpu_facts read_host_cpu_facts(const std::string& sys_root) {
    host_cpu_facts f;
    f.allowed = affinity_of_process();
    std::error_code ec;
    for (const auto& cpu_dir : fs::directory_iterator(fs::path(sys_root) / "devices/system/cpu", ec)) {
        const auto name = cpu_dir.path().filename().string();
        if (name.rfind("cpu", 0) != 0) continue;
        const int cpu = digits(std::string_view(name).substr(3));
        if (cpu < 0) continue;
        std::error_code ec2;
        for (const auto& entry : fs::directory_iterator(cpu_dir.path(), ec2)) {
            const auto e = entry.path().filename().string();
            if (e.rfind("node", 0) != 0) continue;
            if (const int node = digits(std::string_view(e).substr(4)); node >= 0) {
                f.numa_node_of[cpu] = node;
                break;
            }
        }
    }
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::getline(boot, f.boot_id);
    while (!f.boot_id.empty() && std::isspace(static_cast<unsigned char>(f.boot_id.back()))) f.boot_id.pop_back();
    return f;
}

std::optional<int> interface_numa_node(const std::string& interface, const std::string& sys_root) {
    if (!core::valid_netdev_name(interface)) return std::nullopt;  // never outside class/net
    std::ifstream in(fs::path(sys_root) / "class/net" / interface / "device/numa_node");
    int node = -1;
    if (!(in >> node) || node < 0) return std::nullopt;
    return node;
}

}  // namespace meshperf::daemon
