// Broadcast: every rank ends with rank 0's S bytes. Ring: the chain from rank 0, pipelined in
// pieces (rank p−1 sends nothing); tree: the pipelined binary tree from rank 0.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/pipelined_schedule.hpp"
#include "core/collective/plan.hpp"

namespace meshperf::core::ops::broadcast {
namespace {

void build(collective_plan& plan, std::size_t elements, std::size_t piece) {
    plan.steps = plan.algo == collective_algo::tree ? tree_broadcast_steps(plan.ranks, plan.rank, 0, elements, piece)
                                                    : chain_broadcast_steps(plan.ranks, plan.rank, 0, elements, piece);
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte>) noexcept {
    if (plan.rank == 0) ops::fill_own(plan.element, 0, send, 0, plan.send_elements);
    else ops::fill_absent(plan.element, send, 0, plan.send_elements);
}

std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte> send, std::span<const std::byte>) {
    return ops::count_wrong_range(plan.element, send, 0, plan.send_elements, 0, [](std::size_t i) { return test_value(0, i); });
}

std::uint64_t busiest_rank_bytes(collective_algo algo, unsigned ranks, dtype, std::uint64_t size) {
    return algo == collective_algo::tree ? ops::mul_sat(size, ops::busiest_tree_rank(ranks, false)) : size;
}

// The chain: S for every rank but the last, which sends nothing.
std::uint64_t ring_link_bytes(unsigned ranks, dtype, std::uint64_t size, unsigned rank) {
    return rank + 1 < ranks ? size : 0;
}

alpha_beta_terms flat_cost(model_algo, double s, unsigned n) {
    return {n - 1.0, s};  // pipelined ring (chain from the root)
}

constexpr collective_algo algos[] = {collective_algo::ring, collective_algo::tree};
constexpr model_algo model_algos[] = {model_algo::ring};
constexpr measured_prediction predictions[] = {
    {collective_algo::ring,
     plan_formula{collective_op::broadcast, model_algo::ring,
                  "pipelined chain from rank 0, pieces taken as infinitely fine: the measured chain also fills its pipeline, "
                  "(p-2) pieces of 512 KiB"},
     schedule_walk{"a chain from rank 0, pieces of 512 KiB pipelined, (P + p - 2)m/beta + (p - 1)alpha for P pieces of m",
                   "meshperf plan's pipelined ring, (p-1)alpha + S/beta (its plan_time_s), leaves out the pipeline's fill",
                   true}},
    {collective_algo::tree, std::nullopt,
     schedule_walk{"a binary tree from rank 0, pieces of 512 KiB pipelined, an inner rank's link carrying each piece to "
                   "both children",
                   "meshperf plan has no tree broadcast", true}},
};

constexpr collective_op_traits traits{
    .op = collective_op::broadcast,
    .name = "broadcast",
    .algos = algos,
    .ring_is_chain = true,
    .busbw_factor = [](double) { return 1.0; },
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = busiest_rank_bytes,
    .ring_link_bytes = ring_link_bytes,
    .model_name = "broadcast",
    .model_algos = model_algos,
    .flat_cost = flat_cost,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::broadcast

namespace meshperf::core {

extern const collective_op_traits broadcast_op = ops::broadcast::traits;

}  // namespace meshperf::core
