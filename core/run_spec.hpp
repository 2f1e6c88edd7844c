#pragma once
/// The run specification: what a client asks a daemon to measure. Validated once into an
/// immutable value that also travels to the peer, so both sides agree without flags typed
/// twice.
#include "core/rail_spec.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// What one point measures.
enum class test_kind {
    latency,    ///< ping-pong; one-way latency = RTT / 2
    bandwidth,  ///< unidirectional stream(s); message rate comes with it
    bidir,      ///< both directions at once, each reported and the sum
};

/// RDMA operation for bandwidth and latency points (transport rdma only).
enum class rdma_op { write, read, send };

/// libfabric operation (transport ofi only): tagged or untagged send/receive, or RMA.
enum class ofi_op { tagged, msg, write, read };
std::string_view to_string(ofi_op);
/// Throws spec_error listing the operations for an unknown name.
ofi_op parse_ofi_op(std::string_view);

std::string_view to_string(test_kind);
std::string_view to_string(rdma_op);
/// Parse a name; throws spec_error listing the accepted names.
test_kind parse_test_kind(std::string_view);
rdma_op parse_rdma_op(std::string_view);
/// Parses "latency,bandwidth" into kinds, in the given order, without duplicates.
std::vector<test_kind> parse_test_list(std::string_view);
/// Parses a CPU list "0,2-3" into CPU numbers. Throws spec_error.
std::vector<int> parse_cpu_list(std::string_view);

/// Limits that bound every run (an operator can lower them in the daemon's config, table
/// [limits]). Each daemon checks a run against its own limits, as initiator (at submission)
/// and as peer (at the session's hello), so a peer cannot be made to do more than its own
/// configuration allows.
struct run_limits {
    std::uint32_t max_streams = 64;  ///< TCP streams per direction
    std::uint32_t max_qps = 64;      ///< RDMA queue pairs per direction
    std::uint64_t max_iterations = 100'000'000;
    double max_duration_s = 60.0;    ///< per point, fixed or capped
    double max_run_s = 3600.0;       ///< whole run
    /// Bytes one point may move in each direction (all streams together). A fixed-length
    /// run beyond it is refused; adaptive and duration points stop when they reach it.
    std::uint64_t max_bytes_per_point = std::uint64_t{16} << 40;  // 16 TiB
    // Daemon-wide bounds, not per run; carried here so every part of the daemon sees them.
    std::uint32_t max_queued_runs = 64;     ///< runs waiting behind the current one; more: 503
    std::uint32_t max_connections = 1024;   ///< open HTTP connections (sessions and streams included)
    /// A serving daemon ends a session whose initiator sent nothing (not even a heartbeat)
    /// for this long, freeing its measurement gate: a frozen initiator locks nobody out.
    double initiator_silence_s = 10.0;
};


/// Seconds a TCP or RDMA bandwidth point may take to close after its time cap, on any path,
/// a lossy one included: its senders stop within one send slice, drain what their sockets
/// hold for at most 0.8 s, and its receivers end 1 s after the stop with the bytes they have
/// (transport/tcp/stream_loops.hpp).
inline constexpr double point_close_bound_s = 1.0;
/// Seconds a point may wait past its time cap for a flow that has moved no byte at all yet
/// (its streams still starting on a busy host: a triage wave of 32 links on 2 CPUs); a flow
/// that moved any byte, however slowly, is never waited for.
inline constexpr double first_bytes_grace_s = 2.0;
/// What a stream test's point may take past its warm-up and time cap, every wait included:
/// part of every announced point bound (client/support/progress.hpp).
inline constexpr double point_overrun_bound_s = first_bytes_grace_s + point_close_bound_s;

/// A validated run specification. Durations in seconds, sizes in bytes.
struct run_spec {
    std::string peer;                                  ///< "host:port" of the peer daemon
    std::string transport = "tcp";                   ///< a name of core/transport_rules.hpp's table
    std::vector<test_kind> tests{test_kind::latency, test_kind::bandwidth};
    std::vector<std::uint64_t> sizes;                  ///< sorted, unique, 1..max_message_size
    std::uint32_t streams = 1;                         ///< TCP streams or RDMA QPs per direction
    bool reverse = false;                              ///< bandwidth from peer to initiator

    // Length of each point. Adaptive unless iterations or duration_s is set.
    std::optional<std::uint64_t> iterations;           ///< fixed messages (or round trips) per stream
    std::optional<double> duration_s;                  ///< fixed measured time per point
    double precision = 0.01;                           ///< adaptive target: 95% CI half-width / estimate
    double max_point_s = 1.0;                          ///< adaptive time cap per point (after warm-up)
    double warmup_s = 0.1;                             ///< warm-up before every point, not counted

    bool verify = false;                               ///< receiver checks a byte pattern
    bool busy_poll = false;                            ///< latency: spin on non-blocking receive
    std::optional<std::uint64_t> window_bytes;         ///< socket buffer size (SO_SNDBUF/SO_RCVBUF)
    /// Pins the initiator's / the peer's measuring threads to these CPUs (round-robin over a
    /// side's streams). Empty: `cpus` when given, else the daemon's default (one choice per
    /// run, docs/methodology.md "Thread placement").
    std::vector<int> initiator_cpus, peer_cpus;
    /// The older form, kept for older clients: both sides' threads on these CPUs,
    /// round-robin. Not together with initiator_cpus / peer_cpus.
    std::vector<int> cpus;

    // RDMA (transport rdma only)
    rdma_op op = rdma_op::write;
    std::uint32_t tx_depth = 128;                      ///< send-queue window
    std::string rdma_device;                           ///< empty: the device that owns the session's address
    std::uint32_t rdma_port = 1;
    std::optional<int> gid_index;                      ///< empty: RoCE v2 IPv4-mapped GID of the session address

    // libfabric (transport ofi only; in the JSON only for it, so other specs read as before)
    std::string ofi_provider;                          ///< core provider name; empty: the best both daemons have
    core::ofi_op ofi_op = core::ofi_op::tagged;

    /// Rails measured at once (docs/rails.md): each carries `streams` streams per direction,
    /// bound to its own addresses. Empty: one path, the session's addresses. TCP only.
    std::vector<rail_pair> rails;

    // Memory domains ("host" or "cuda:N")
    std::string local_memory = "host";
    std::string remote_memory = "host";

    /// True when neither iterations nor duration_s fixes the length.
    bool adaptive() const { return !iterations && !duration_s; }
};

/// Bytes a fixed-length point (spec.iterations set) moves per direction after its warm-up:
/// iterations × size × streams (one stream for latency). Saturates at UINT64_MAX; 0 when
/// the spec has no fixed iteration count.
std::uint64_t fixed_point_bytes(const run_spec&, test_kind, std::uint64_t size);

/// Streams (TCP) or queue pairs (RDMA) one direction of a test uses: 1 for latency, else
/// spec.streams on each rail (spec.streams × the number of rails, at least one).
std::uint32_t streams_per_direction(const run_spec&, test_kind);

/// The CPUs the spec pins one side's measuring threads to (initiator_cpus or peer_cpus, else
/// cpus); empty when the spec leaves the choice to the daemon.
const std::vector<int>& cpus_for_side(const run_spec&, bool initiator);

/// The spec as the initiator sends it to its peer: the peer's CPUs in the older `cpus`
/// field (which each daemon reads as the CPUs of its own threads), without initiator_cpus
/// and peer_cpus, so that a peer older than those fields pins its threads as asked instead
/// of refusing them as unknown.
run_spec spec_for_peer(const run_spec&);

/// Checks every field; throws spec_error naming the first problem and what to do.
void validate(const run_spec&, const run_limits& = {});

/// The memory domain that puts each rail's buffers on the GPU nearest that rail's NIC. The
/// CLI resolves it into every rail's local_memory / peer_memory from both daemons' GET
/// /v1/info (docs/rails.md); a spec with it and a rail without that side's memory is refused.
inline constexpr std::string_view nearest_gpu_memory = "cuda:auto";

/// This side's memory on `rail`: the rail's own (rail_pair::local_memory at the initiator,
/// peer_memory at the peer) when set, else the run's.
const std::string& rail_memory(const run_spec&, const rail_pair& rail, bool initiator);

/// This side's memory domains: one per rail of the spec (rail_memory), or the run's alone
/// without rails.
std::vector<std::string> side_memories(const run_spec&, bool initiator);

/// Whether either side's buffers are in GPU memory on any rail.
bool uses_gpu_memory(const run_spec&);

/// JSON form (the body of POST /v1/runs and the spec in a result). from_json rejects unknown
/// fields and wrong types with spec_error, then validates.
nlohmann::json to_json(const run_spec&);
run_spec run_spec_from_json(const nlohmann::json&, const run_limits& = {});

}  // namespace meshperf::core
