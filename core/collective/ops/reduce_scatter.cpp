// Reduce-scatter: every rank ends with block r of the element-wise sum of every rank's S
// bytes, its own chunk. Ring only: the first half of NCCL's ring all-reduce.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/plan.hpp"

namespace meshperf::core::ops::reduce_scatter {
namespace {

void build(collective_plan& plan, std::size_t elements, std::size_t) {
    plan.steps = ops::from_ring(ring_reduce_scatter_steps(plan.ranks, plan.rank), elements, plan.ranks, plan.rank);
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte>) noexcept {
    ops::fill_own(plan.element, plan.rank, send, 0, plan.send_elements);
}

// Its own chunk against the sum over ranks.
std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte> send, std::span<const std::byte>) {
    const unsigned p = plan.ranks;
    const auto own = ring_chunk(plan.send_elements, p, plan.rank);
    return ops::count_wrong_range(plan.element, send, own.first, own.count, sum_tolerance(plan.element, p),
                                  [p](std::size_t i) { return ops::sum_over_ranks(p, i); });
}

std::uint64_t ring_link_bytes(unsigned ranks, dtype element, std::uint64_t size, unsigned rank) {
    return ops::ring_sent_bytes(ring_reduce_scatter_steps(ranks, rank), ranks, element, size);
}

alpha_beta_terms flat_cost(model_algo algo, double s, unsigned n) {
    const double nm1 = n - 1.0, frac = nm1 / n;
    if (algo == model_algo::ring) return {nm1, frac * s};
    return {static_cast<double>(ops::ceil_log2(n)), frac * s};  // recursive halving
}

constexpr collective_algo algos[] = {collective_algo::ring};
constexpr model_algo model_algos[] = {model_algo::ring, model_algo::recursive_halving};
constexpr measured_prediction predictions[] = {
    {collective_algo::ring, plan_formula{collective_op::reduce_scatter, model_algo::ring, ""}, std::nullopt},
};

constexpr collective_op_traits traits{
    .op = collective_op::reduce_scatter,
    .name = "reduce-scatter",
    .algos = algos,
    .reduces = true,
    .per_rank_blocks = true,
    .busbw_factor = ops::one_pass_factor,
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = ops::blocks_to_peers,
    .ring_link_bytes = ring_link_bytes,
    .model_name = "reduce_scatter",
    .model_algos = model_algos,
    .flat_cost = flat_cost,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::reduce_scatter

namespace meshperf::core {

extern const collective_op_traits reduce_scatter_op = ops::reduce_scatter::traits;

}  // namespace meshperf::core
