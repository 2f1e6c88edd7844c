// All-reduce: every rank ends with the element-wise sum of every rank's S bytes. Ring: NCCL's
// reduce-scatter then all-gather around the ring; tree: the pipelined binary tree from rank 0,
// reduced up and broadcast down.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/pipelined_schedule.hpp"
#include "core/collective/plan.hpp"

namespace meshperf::core::ops::allreduce {
namespace {

void build(collective_plan& plan, std::size_t elements, std::size_t piece) {
    plan.steps = plan.algo == collective_algo::tree
                     ? tree_allreduce_steps(plan.ranks, plan.rank, elements, piece)
                     : ops::from_ring(ring_allreduce_steps(plan.ranks, plan.rank), elements, plan.ranks, plan.rank);
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte>) noexcept {
    ops::fill_own(plan.element, plan.rank, send, 0, plan.send_elements);
}

std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte> send, std::span<const std::byte>) {
    const unsigned p = plan.ranks;
    return ops::count_wrong_range(plan.element, send, 0, plan.send_elements, sum_tolerance(plan.element, p),
                                  [p](std::size_t i) { return ops::sum_over_ranks(p, i); });
}

std::uint64_t busiest_rank_bytes(collective_algo algo, unsigned ranks, dtype d, std::uint64_t size) {
    if (algo == collective_algo::tree) return ops::mul_sat(size, ops::busiest_tree_rank(ranks, true));
    // Rank r sends every chunk but r+1 in the reduce-scatter phase and every chunk but r+2
    // in the all-gather phase. The chunks (ring_chunk) hold q or q+1 elements, the m = E
    // mod p first ones q+1: two neighbours of q each exist unless m = p−1.
    const std::uint64_t p = ranks, element = dtype_bytes(d), n = size / element, q = n / p, m = n % p;
    return ops::mul_sat(ops::mul_sat(2, n - q) - (m == p - 1 ? 1 : 0), element);
}

std::uint64_t ring_link_bytes(unsigned ranks, dtype element, std::uint64_t size, unsigned rank) {
    return ops::ring_sent_bytes(ring_allreduce_steps(ranks, rank), ranks, element, size);
}

alpha_beta_terms flat_cost(model_algo algo, double s, unsigned n) {
    const double nm1 = n - 1.0, frac = nm1 / n;
    if (algo == model_algo::ring) return {2 * nm1, 2 * frac * s};
    // Double binary tree: reduce up and broadcast down, pipelined; each rank is inner in
    // one tree (two children, S/2 each) and a leaf in the other, so each phase moves S
    // in and out of a rank. With two ranks each tree is one edge: S/2 per phase.
    return {2 * static_cast<double>(ops::ceil_log2(n)), (n == 2 ? 1.0 : 2.0) * s};
}

constexpr collective_algo algos[] = {collective_algo::ring, collective_algo::tree};
constexpr model_algo model_algos[] = {model_algo::ring, model_algo::tree};
constexpr measured_prediction predictions[] = {
    {collective_algo::ring, plan_formula{collective_op::allreduce, model_algo::ring, ""}, std::nullopt},
    {collective_algo::tree,
     plan_formula{collective_op::allreduce, model_algo::tree,
                  "modelled as NCCL's double binary tree (S/2 per tree); the measured tree is one binary tree moving S on "
                  "each edge, so expect it slower than predicted"},
     std::nullopt},
};

constexpr collective_op_traits traits{
    .op = collective_op::allreduce,
    .name = "allreduce",
    .algos = algos,
    .reduces = true,
    .busbw_factor = [](double p) { return 2 * (p - 1) / p; },
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = busiest_rank_bytes,
    .ring_link_bytes = ring_link_bytes,
    .model_name = "all_reduce",
    .model_algos = model_algos,
    .flat_cost = flat_cost,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::allreduce

namespace meshperf::core {

extern const collective_op_traits allreduce_op = ops::allreduce::traits;

}  // namespace meshperf::core
