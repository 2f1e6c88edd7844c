#pragma once
/// Where the measuring threads ran (CPU, NUMA node, pinned or not, shared with the other
/// side), and the choice of CPUs a daemon makes once per run. Pure: the daemon reads the
/// host (sched_getaffinity, /sys) and hands the facts in.
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Who chose the CPUs a side's threads were pinned to.
enum class cpu_source {
    none,      ///< not pinned: the scheduler placed the threads
    spec,      ///< the run spec (`--cpu`, `initiator_cpus`/`peer_cpus`, or the older `cpus`)
    automatic, ///< the daemon's default, chosen once per run
};

/// Where one side's measuring threads ran during a point.
struct side_placement {
    /// CPUs the threads ran on, sorted and unique: each thread's CPU as sched_getcpu saw it
    /// when its loop started and when it ended (a pinned thread stays on its CPU).
    std::vector<int> cpus;
    /// NUMA nodes of those CPUs, sorted and unique; empty when the host does not say.
    std::vector<int> numa_nodes;
    /// Every measuring thread was pinned to one CPU (its affinity was set).
    bool pinned = false;
    cpu_source source = cpu_source::none;

    bool operator==(const side_placement&) const = default;
};

/// Where both sides' measuring threads ran during a point.
struct point_placement {
    side_placement initiator;
    /// Empty when the peer did not report its side (a meshperfd older than this field).
    std::optional<side_placement> peer;
    /// Both daemons run on one host (same /proc/sys/kernel/random/boot_id); empty: unknown.
    std::optional<bool> same_host;
    /// On one host, whether some CPU ran threads of both sides; empty when unknown (the
    /// peer's side or the hosts are unknown) or the sides are on different hosts.
    std::optional<bool> shared_cpu;

    bool operator==(const point_placement&) const = default;
};

/// Builds a point placement and derives shared_cpu from the two sides' CPUs.
point_placement make_point_placement(side_placement initiator, std::optional<side_placement> peer,
                                     std::optional<bool> same_host);

/// JSON forms (docs/result-schema.md, "placement"). The _from_json functions check types and
/// bounds (a peer's JSON is not trusted) and throw spec_error naming the field.
nlohmann::json to_json(const side_placement&);
nlohmann::json to_json(const point_placement&);
side_placement side_placement_from_json(const nlohmann::json&);
point_placement point_placement_from_json(const nlohmann::json&);

/// "0", "0-3", "0-1,4": a CPU (or node) list in the kernel's cpulist format.
std::string format_cpu_list(const std::vector<int>&);

/// One side in words: "CPU 0 (NUMA 0)", "CPUs 0-3 (NUMA 0-1)", "CPU 1 (not pinned)".
std::string describe(const side_placement&);
/// Both sides in words: "initiator CPU 0 (NUMA 0), peer CPU 1 (NUMA 0), separate CPUs on one
/// host"; the peer reads "unknown (older meshperfd)" when it did not report.
std::string describe(const point_placement&);

/// The CLI's `--cpu` value: "A" puts both sides on A, "A,B" the initiator on A and the peer
/// on B; each of A and B is a CPU or a range ("0-3": that side's streams spread over it).
struct cpu_option {
    std::vector<int> initiator, peer;
};
/// Parses a --cpu value; throws spec_error saying the accepted forms.
cpu_option parse_cpu_option(std::string_view);

/// What a daemon knows when it chooses the CPUs for its measuring threads.
struct cpu_choice_input {
    /// CPUs this daemon may run on (sched_getaffinity: taskset, systemd CPUAffinity=).
    std::vector<int> allowed;
    /// NUMA node of each CPU, where the host says; CPUs missing here have no known node.
    std::map<int, int> numa_node_of;
    /// NUMA node of the NIC that carries the session; empty when unknown (loopback, a VM).
    std::optional<int> nic_node;
    /// CPUs the other side uses when both daemons are on one host; empty otherwise.
    std::vector<int> other_side;
    /// Measuring threads this side runs at once in the run's largest point (1 for latency).
    std::uint32_t threads = 1;
};

/// The CPUs this side's measuring threads are pinned to for the whole run (threads go to
/// them round-robin). Sorted; empty only when `allowed` is empty. The rule:
///   1. candidates: the allowed CPUs on the NIC's NUMA node, or all allowed CPUs when the
///      node is unknown or none of them is on it;
///   2. with the other side on this host, drop the CPUs it uses (first from the candidates,
///      else from all allowed CPUs); when it holds every one and there are at least two,
///      take the upper half of the candidates (the other side, choosing again with ours,
///      takes the lower half); with a single candidate both sides share it;
///   3. the first `threads` of what is left (at least one).
std::vector<int> choose_cpus(const cpu_choice_input&);

}  // namespace meshperf::core
