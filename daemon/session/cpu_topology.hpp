#pragma once
/// What this host says about its CPUs, for placing the measuring threads: the CPUs this
/// daemon may run on, the NUMA node of each, the NUMA node of a network interface, and the
/// boot id that tells two daemons they share a host.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// This host's CPU facts, read when a run starts (so `taskset -a -p` on a running daemon
/// counts from its next run).
struct host_cpu_facts {
    /// CPUs this daemon may run on (sched_getaffinity of its main thread: taskset, systemd
    /// CPUAffinity=, a container's cpuset), sorted.
    std::vector<int> allowed;
    /// NUMA node of each CPU that /sys/devices/system/cpu/cpuN/nodeM names.
    std::map<int, int> numa_node_of;
    /// /proc/sys/kernel/random/boot_id: equal on two daemons exactly when they share a
    /// running kernel, hence its CPUs. Empty when unreadable.
    std::string boot_id;
};

/// Reads the facts above. `sys_root` is the sysfs mount (tests pass a directory of their own).
host_cpu_facts read_host_cpu_facts(const std::string& sys_root = "/sys");

/// NUMA node of the device behind a network interface (/sys/class/net/IF/device/numa_node);
/// empty for loopback, virtual devices, a node of -1, or a name that is not an interface.
std::optional<int> interface_numa_node(const std::string& interface, const std::string& sys_root = "/sys");

}  // namespace meshperf::daemon
