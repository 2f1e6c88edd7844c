#pragma once
/// The measured collectives as one table, in the style of nccl-tests' `testColl`: each op is
/// one file of core/collective/ops/ filling one collective_op_traits (its name, the
/// algorithms that run it, its schedule, the bytes its ranks move, its busbw factor, the
/// inputs it starts with and how its output is verified, and its α–β cost as terms that
/// analysis/collective evaluates), and collective_ops() lists them in enum order. Every layer
/// asks this table instead of switching on the op. Pure: no I/O.
#include "core/collective/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace meshperf::core {

/// The measured collectives. `incast` is p−1 senders to one receiver at once. A new op adds
/// its name here, its file in core/collective/ops/ and its line in the table (ops.cpp).
enum class collective_op { allreduce, allgather, reduce_scatter, alltoall, broadcast, incast };

/// The algorithms a measured collective runs with: a ring (or a chain for broadcast), a
/// binary tree, or direct messages to all peers at once.
enum class collective_algo { ring, tree, direct };

/// The algorithms the α–β model (analysis/collective, `meshperf plan`) predicts with:
/// NCCL's ring and double binary tree, recursive doubling (all-gather) and halving
/// (reduce-scatter), and the pairwise all-to-all.
enum class model_algo { ring, tree, recursive_doubling, recursive_halving, pairwise };

/// "ring", "tree", "recursive_doubling", "recursive_halving", "pairwise".
std::string_view to_string(model_algo) noexcept;

struct collective_plan;

/// The α–β cost of one op over n ranks joined by one link: latency_terms × α +
/// bandwidth_bytes / β (analysis/collective multiplies them out).
struct alpha_beta_terms {
    double latency_terms = 0;    ///< how many messages' α the op waits for, one after another
    double bandwidth_bytes = 0;  ///< the bytes that cross the busiest link, one after another
};

/// `meshperf plan`'s formula a measured (op, algorithm) is predicted with.
struct plan_formula {
    collective_op op = collective_op::allreduce;  ///< whose flat_cost: another op's where the traffic is alike
    model_algo algo = model_algo::ring;
    std::string_view caveat;  ///< how the model differs from what runs ("" when it is the same)
};

/// A measured (op, algorithm) predicted by walking its own schedule (analysis::schedule_time).
struct schedule_walk {
    std::string_view what;         ///< the schedule walked and its cost, for the caveat
    std::string_view versus_plan;  ///< what `meshperf plan` has for it, for the caveat
    bool pipelined = true;         ///< messages of pipeline_piece_bytes at most; else S each
};

/// How the client predicts one measured algorithm of an op: by a plan formula, by walking
/// the schedule (which wins when both are given; the formula is then reported beside it),
/// or not at all (neither).
struct measured_prediction {
    collective_algo algo = collective_algo::ring;
    std::optional<plan_formula> formula;
    std::optional<schedule_walk> walk;
};

/// One measured collective, everything about it (one file of core/collective/ops/).
/// Functions take a valid shape: at least 2 ranks, an algorithm of `algos`, a size that is a
/// multiple of size_step (core/collective/spec.hpp).
struct collective_op_traits {
    collective_op op = collective_op::allreduce;
    std::string_view name;                   ///< as --op takes it and results write it
    std::span<const collective_algo> algos;  ///< the algorithms that run it, the default first
    bool reduces = false;                    ///< sums what it receives (redop "sum", else "none")
    bool moves_bytes = false;                ///< schedules bytes, not elements (size step 1)
    bool per_rank_blocks = false;            ///< splits S into p blocks: S a multiple of p elements
    bool ring_is_chain = false;              ///< its ring is a chain from rank 0 (p−1 links)
    /// nccl-tests' bus-bandwidth factor for p ranks: busbw = algbw × factor.
    double (*busbw_factor)(double p) = nullptr;
    /// Fills plan.steps and the buffers' sizes of the plan's rank (op, algo, ranks, rank,
    /// element and element_bytes set; send_elements = elements): the schedule.
    void (*build)(collective_plan& plan, std::size_t elements, std::size_t piece_elements) = nullptr;
    /// The rank's buffers before an iteration (core::fill_inputs).
    void (*fill_inputs)(const collective_plan&, std::span<std::byte> send, std::span<std::byte> recv) noexcept = nullptr;
    /// Wrong elements of the rank's result (core::count_wrong_outputs): its verification.
    std::uint64_t (*count_wrong)(const collective_plan&, std::span<const std::byte> send,
                                 std::span<const std::byte> recv) = nullptr;
    /// Bytes the busiest rank sends, or receives, in one iteration (saturating).
    std::uint64_t (*busiest_rank_bytes)(collective_algo, unsigned ranks, dtype, std::uint64_t size) = nullptr;
    /// Bytes rank `rank` sends to its right neighbour in one iteration of the ring; null when
    /// no ring runs the op.
    std::uint64_t (*ring_link_bytes)(unsigned ranks, dtype, std::uint64_t size, unsigned rank) = nullptr;
    std::string_view model_name;             ///< `meshperf plan`'s name ("all_reduce"); "" when it has no formula
    std::span<const model_algo> model_algos; ///< the algorithms plan models it with, NCCL's usual first
    /// plan's cost of the op with `algo` (of model_algos) on S = `s` bytes over n ≥ 2 ranks.
    alpha_beta_terms (*flat_cost)(model_algo algo, double s, unsigned n) = nullptr;
    std::span<const measured_prediction> predictions;  ///< one per algorithm the client predicts
};

/// Every measured collective, in the order of collective_op (entry i is op i).
std::span<const collective_op_traits> collective_ops() noexcept;
/// The entry of `op`.
const collective_op_traits& op_traits(collective_op op) noexcept;
/// How `op` run with `algo` is predicted; null when it is not.
const measured_prediction* prediction_of(collective_op op, collective_algo algo) noexcept;

}  // namespace meshperf::core
