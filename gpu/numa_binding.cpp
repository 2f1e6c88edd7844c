#include "gpu/numa_binding.hpp"

#include "gpu/detail/cuda_check.hpp"
#include "gpu/topology.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace meshperf::gpu {
namespace {

constexpr std::size_t max_nodes = 1024;
constexpr std::size_t word_bits = 8 * sizeof(unsigned long);

bool parse_int(std::string_view s, int& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size() && out >= 0;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    std::vector<int> cpus;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        const auto dash = item.find('-');
        int lo = 0, hi = 0;
        if (dash == std::string_view::npos) {
            if (!parse_int(item, lo)) return {};
            hi = lo;
        } else if (!parse_int(item.substr(0, dash), lo) || !parse_int(item.substr(dash + 1), hi) || hi < lo) {
            return {};
        }
        if (hi >= CPU_SETSIZE) return {};
        for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    }
    return cpus;
}

int device_numa_node(int device, const std::filesystem::path& sysfs_root) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return numa_node_of(bus, sysfs_root);
}

scoped_numa_binding::scoped_numa_binding(int node, const std::filesystem::path& sysfs_root) {
    if (node < 0 || static_cast<std::size_t>(node) >= max_nodes) {
        note_ = "NUMA node unknown: the thread is not bound";
        return;
    }
    std::ifstream in(sysfs_root / fmt::format("devices/system/node/node{}/cpulist", node));
    std::string list;
    std::getline(in, list);
    const auto cpus = parse_cpu_list(list);
    if (cpus.empty()) {
        note_ = fmt::format("NUMA node {}: no CPU list in sysfs: the thread is not bound", node);
        return;
    }
    cpu_set_t old{}, want{};
    CPU_ZERO(&want);
    for (int c : cpus) CPU_SET(c, &want);
    if (::sched_getaffinity(0, sizeof old, &old) != 0 || ::sched_setaffinity(0, sizeof want, &want) != 0) {
        note_ = fmt::format("NUMA node {}: sched_setaffinity: {}", node, std::strerror(errno));
        return;
    }
    affinity_set_ = true;
    old_cpus_.assign(reinterpret_cast<const unsigned long*>(&old),
                     reinterpret_cast<const unsigned long*>(&old) + sizeof old / sizeof(unsigned long));
    // The memory policy: the node preferred, falling back elsewhere when it is full.
    old_nodes_.assign(max_nodes / word_bits, 0);
    std::vector<unsigned long> mask(max_nodes / word_bits, 0);
    mask[static_cast<std::size_t>(node) / word_bits] |= 1ul << (static_cast<std::size_t>(node) % word_bits);
    if (::syscall(SYS_get_mempolicy, &old_mode_, old_nodes_.data(), max_nodes, nullptr, 0ul) != 0 ||
        ::syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask.data(), max_nodes) != 0) {
        note_ = fmt::format("NUMA node {}: CPUs bound, memory policy not set: {}", node, std::strerror(errno));
        return;
    }
    policy_set_ = true;
}

scoped_numa_binding::~scoped_numa_binding() {
    if (policy_set_) (void)::syscall(SYS_set_mempolicy, old_mode_, old_nodes_.data(), max_nodes);
    if (affinity_set_) (void)::sched_setaffinity(0, old_cpus_.size() * sizeof(unsigned long),
                                                 reinterpret_cast<const cpu_set_t*>(old_cpus_.data()));
}

}  // namespace meshperf::gpu
