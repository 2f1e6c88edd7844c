#pragma once
/// Where a run's measuring threads go (docs/methodology.md, "Thread placement"): each side
/// chooses its CPUs once per run -- the spec's, or a default near the NIC, away from the
/// other side when both daemons share a host -- and every point's threads are pinned there.
/// The initiator tells the peer its choice and host in the hello; the peer answers with its
/// own in hello_ok and reports where its threads ran in every point_done.
#include "core/placement.hpp"
#include "core/run_spec.hpp"
#include "daemon/session/cpu_topology.hpp"
#include "transport/stream_thread.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// One side's placement for a whole run.
struct run_placement {
    host_cpu_facts host;                 ///< this host, as read when the run started
    std::vector<int> cpus;               ///< this side's CPUs (empty: threads left unpinned)
    core::cpu_source source = core::cpu_source::none;
    std::optional<bool> same_host;       ///< both daemons on one host; empty: not known
    std::vector<int> other_side_cpus;    ///< the other side's CPUs, as its hello (or hello_ok) said
};

/// Threads one side runs at once in the spec's largest point: 1 for latency, the streams
/// (QPs) for bandwidth, twice that for bidir.
std::uint32_t measuring_threads(const core::run_spec&);

/// Throws spec_error "CPU 99 is not available to this meshperfd: it may use 0-1 (field)"
/// unless every CPU of `cpus` is in `allowed`.
void require_available_cpus(const std::vector<int>& cpus, const std::vector<int>& allowed, const char* field);

/// Whether `peer` ("host:port") names this host by address: loopback, or an address of one of
/// its interfaces. Names are not resolved (false), so the check never waits on DNS.
bool names_this_host(const std::string& peer);

/// Checks at submission (POST /v1/runs), before anything is queued. Throws spec_error when
/// the spec pins the initiator to a CPU this daemon may not use, or pins both sides of a
/// spinning latency test (busy_poll, RDMA) to one CPU of this host.
void check_placement_at_submission(const core::run_spec&, const host_cpu_facts&);

/// Initiator, before the hello: its CPUs, from the spec (checked) or its default.
/// `session_ip`: this side's address of the session (its interface's NUMA node counts).
run_placement initiator_placement(const core::run_spec&, host_cpu_facts, const std::string& session_ip);

/// The "placement" object this side puts in its hello (initiator) or hello_ok (peer).
nlohmann::json hello_placement(const run_placement&);

/// Peer, at the hello: its CPUs -- the spec's, each checked against its own affinity (throws
/// spec_error naming the CPU) -- else its default, away from the initiator's when the hello
/// says both run on this host. An initiator older than these fields leaves the host unknown.
run_placement peer_placement(const core::run_spec&, host_cpu_facts, const std::string& session_ip, const nlohmann::json& hello);

/// Initiator, at hello_ok: learns the peer's CPUs and host; on one host with its default
/// CPUs, moves off the peer's when it has others.
void settle_initiator_placement(run_placement&, const core::run_spec&, const std::string& session_ip,
                                const nlohmann::json& hello_ok);

/// Where this side's threads ran in a point, from their records.
core::side_placement observed_placement(const run_placement&, const std::vector<transport::thread_cpu_record>&);

/// A point's placement at the initiator: its own threads' records and the peer's report in
/// point_done (absent from older peers: the peer side is then unknown).
core::point_placement point_placement_at_initiator(const run_placement&, const std::vector<transport::thread_cpu_record>&,
                                                   const nlohmann::json& peer_done);

}  // namespace meshperf::daemon
