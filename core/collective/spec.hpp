#pragma once
/// The collective run specification: what
/// `meshperf collective` asks the coordinator to measure, validated once into an immutable
/// value that the coordinator hands to every participant, so that all ranks run one plan
/// without flags typed twice. What core::run_spec is for pairwise sweeps; it shares that
/// spec's transport names, size lists, limits and error style. S, a size, is the nccl-tests
/// "size" of core/collective/figures.hpp (the per-rank buffer of all-reduce and broadcast,
/// the gathered buffer of all-gather and reduce-scatter, the per-rank send buffer of
/// all-to-all, what each sender of an incast sends).
#include "core/collective/figures.hpp"
#include "core/collective/dtype.hpp"
#include "core/run_spec.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Iterations per size and warm-up iterations before them when none are given: those of
/// nccl-tests (-n 20, -w 5).
inline constexpr std::uint64_t default_collective_iterations = 20;
inline constexpr std::uint64_t default_collective_warmup = 5;

/// Limits that bound every collective run. `run` is the daemon's [limits] table as it bounds
/// a pairwise run: max_iterations and max_duration_s bound each size, max_bytes_per_point
/// bounds what one rank sends or receives for one size (collective_size_bytes). Every
/// participant checks the plan against its own limits, as a sweep's peer does.
struct collective_limits {
    run_limits run{};
    std::uint32_t max_ranks = 4096;  ///< hosts in one run
};

/// Turns one HOST[:PORT] as written into the one spelling of that daemon ("node7" and
/// "node7:7470" both to "node7:7470"), or throws spec_error for a malformed one. Callers pass
/// `[](std::string_view h) { return transport::parse_endpoint(h).to_string(); }`, the rule
/// the run spec's peer follows; core cannot call it itself (core depends on nothing of ours).
using endpoint_normalizer = std::function<std::string(std::string_view)>;

/// A validated collective run. Sizes in bytes, durations in seconds.
struct collective_spec {
    /// The daemons, one per rank: rank r is hosts[r]. After collective_spec_from_json and
    /// normalize_endpoints, each as the endpoint_normalizer writes it.
    std::vector<std::string> hosts;
    /// The daemon that takes the run, hands the plan to the others and runs the barrier; one
    /// of the hosts. Empty: hosts[0] (coordinator_of).
    std::optional<std::string> coordinator;
    /// The collectives measured, each over every size, in this order, without repeats.
    std::vector<collective_op> ops{collective_op::allreduce};
    /// One algorithm for every op. Empty: default_algo(op) for each op (algo_for).
    std::optional<collective_algo> algo;
    std::vector<std::uint64_t> sizes;                  ///< S; sorted, unique, 1..max_message_size
    std::string transport = "tcp";  ///< a name of core/transport_rules.hpp's table
    /// RDMA only, on every rank, as a sweep's: the device (empty: the one that holds the
    /// daemon's address), its port, the GID index (empty: the RoCE v2 GID of that address).
    std::string rdma_device;
    std::uint32_t rdma_port = 1;
    std::optional<int> gid_index;
    std::string memory = "host";                       ///< every rank's buffers: "host" or "cuda:N", as run_spec's memory domains
    dtype element = dtype::fp32;                       ///< what is summed, and the unit of the sizes
    bool verify = false;                               ///< every rank checks its result and counts wrong elements

    // Length of each size: a fixed count of iterations, or a fixed time; never both.
    std::optional<std::uint64_t> iterations = default_collective_iterations;
    std::optional<double> duration_s;                  ///< measured time per size, after the warm-up
    std::uint64_t warmup_iterations = default_collective_warmup;  ///< before every size, not counted

    bool predict = false;                              ///< the α–β prediction next to each measured size
    /// `--model matrix.json`: the per-link fits the prediction uses instead of the run's own
    /// probes. Client side only: the client reads the file and predicts, so it is never in
    /// to_json and collective_spec_from_json refuses it.
    std::optional<std::string> model_file;
};

/// The coordinator: spec.coordinator, else hosts[0] (empty when there are no hosts).
std::string_view coordinator_of(const collective_spec&);

/// The algorithm `op` runs with: spec.algo, else default_algo(op).
collective_algo algo_for(const collective_spec&, collective_op);

/// Parses "allreduce,alltoall" into ops (parse_collective_op), in the given order, without
/// repeats. Throws spec_error for an empty item or an unknown name.
std::vector<collective_op> parse_collective_op_list(std::string_view);

/// The step of the sizes `op` can run over `ranks` ranks: a size must be a multiple of it.
/// All-reduce and broadcast: one element (dtype_bytes); all-gather, reduce-scatter and
/// all-to-all: ranks elements (p equal blocks of whole elements); incast: 1 byte (it moves
/// bytes and reduces nothing).
std::uint64_t size_step(collective_op, unsigned ranks, dtype);

/// Why `op` with `algo` cannot run over `ranks` ranks on a size of `size_bytes`, in words
/// ("the size must be a positive multiple of 24 bytes"), or empty when it can: fewer than 2
/// ranks, an algorithm that does not run op, a size that is 0 or not a multiple of size_step.
/// One rule for the plans (core/collective/plan.hpp) and the figures' checks.
std::string collective_shape_problem(collective_op, collective_algo, unsigned ranks, dtype, std::uint64_t size_bytes);

/// The step of the sizes every op of the spec can run: the least common multiple of their
/// size_step over hosts.size() ranks.
std::uint64_t size_step(const collective_spec&);

/// Bytes that the busiest rank sends, or receives, in one iteration of `op` run with `algo`
/// over `ranks` ranks on a size of `size` bytes (a valid one: a multiple of size_step), per
/// direction. Ring all-reduce: 2(E − ⌊E/p⌋) elements of E = S / element size, one less
/// when E mod p = p − 1 (2(p−1)/p·S when p divides E); ring or direct all-gather, ring reduce-scatter, direct all-to-all:
/// (p−1)/p·S; tree all-reduce: S up to the parent and S down to each child; tree broadcast:
/// S to each child; chain broadcast: S; incast: (p−1)·S into the receiver. Saturates at
/// UINT64_MAX. Throws spec_error for fewer than 2 ranks or an algorithm that cannot run op.
std::uint64_t collective_rank_bytes(collective_op, collective_algo, unsigned ranks, dtype, std::uint64_t size);

/// What the busiest rank moves per direction for one size of a fixed-length run
/// (spec.iterations set), warm-up included: (warmup_iterations + iterations) ×
/// collective_rank_bytes. Saturates at UINT64_MAX; 0 when the spec has no fixed count.
std::uint64_t collective_size_bytes(const collective_spec&, collective_op, std::uint64_t size);

/// Normalizes hosts and coordinator with `normalize`; throws spec_error naming the rank
/// ("hosts: rank 2: address ...") of a host it refuses.
collective_spec normalize_endpoints(collective_spec, const endpoint_normalizer& normalize);

/// Checks every field; throws spec_error naming the first problem and what to do: fewer than
/// 2 hosts or more than limits.max_ranks, a malformed host, a daemon given twice (compared
/// as `normalize` writes them), a coordinator that is not one of the hosts, no ops, an op
/// the algorithm cannot run, sizes out of range or not ascending, a size an op cannot run
/// (with the nearest valid sizes below and above), iterations, warm-up and duration out of
/// range or both given, a size beyond limits.run.max_bytes_per_point (with the largest size
/// that fits), a memory domain that is not host or cuda:N, a model file without predict.
void validate(const collective_spec&, const endpoint_normalizer& normalize, const collective_limits& = {});

/// JSON form: what a client submits and what the coordinator hands to every participant
/// (model_file is never in it). coordinator, algo, iterations and duration_s are null when not given.
nlohmann::json to_json(const collective_spec&);

/// Reads the JSON form: only "hosts" is required (an array of "HOST[:PORT]"); the rest take
/// the defaults of collective_spec, and sizes 1K..64M; a duration_s without iterations makes
/// a timed run (the default count is dropped). "ops" and "sizes" may be arrays or
/// strings ("allreduce,allgather", "1K..64M"); sizes as sent, ascending without repeats, or
/// refused (require_ascending). Rejects unknown fields and wrong types with spec_error,
/// validates, then normalizes hosts and coordinator (normalize_endpoints).
collective_spec collective_spec_from_json(const nlohmann::json&, const endpoint_normalizer& normalize,
                                          const collective_limits& = {});

}  // namespace meshperf::core
