#pragma once
/// Binding the calling thread to a GPU's NUMA node, so the pinned host memory it allocates
/// (first touched by the driver on this thread) lands on the node nearest the GPU. Linux
/// only, no libnuma: CPU affinity from sysfs and set_mempolicy(2). Plain C++.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::gpu {

/// The CPUs of a sysfs cpulist ("0-3,8,10-11"), ascending as written; empty when the text
/// is malformed or lists none. Pure.
std::vector<int> parse_cpu_list(std::string_view text);

/// The NUMA node of cuda:device (its PCI function's numa_node in sysfs), or -1 when the
/// kernel does not say (one-node machines, VMs, a sandbox without /sys/bus/pci). The device
/// must be usable (require_device).
int device_numa_node(int device, const std::filesystem::path& sysfs_root = "/sys");

/// For its lifetime, binds the calling thread's CPUs to a NUMA node's and prefers that node
/// for its memory (MPOL_PREFERRED); restores the previous affinity and policy when
/// destroyed, on the same thread. Best effort: a node < 0, a node sysfs does not list, or a
/// refused call leaves the thread as it was, and note() says why. Not movable.
class scoped_numa_binding {
public:
    explicit scoped_numa_binding(int node, const std::filesystem::path& sysfs_root = "/sys");
    scoped_numa_binding(const scoped_numa_binding&) = delete;
    scoped_numa_binding& operator=(const scoped_numa_binding&) = delete;
    ~scoped_numa_binding();

    /// Whether the CPU affinity was changed (the memory policy may still have been refused).
    bool bound() const noexcept { return affinity_set_; }
    /// Empty when both were set; else what was not done, and why.
    const std::string& note() const noexcept { return note_; }

private:
    bool affinity_set_ = false;
    bool policy_set_ = false;
    std::vector<unsigned long> old_cpus_;  // cpu_set_t words
    int old_mode_ = 0;
    std::vector<unsigned long> old_nodes_;
    std::string note_;
};

}  // namespace meshperf::gpu
