// All-gather: rank r contributes block r of S (S/p bytes) and every rank ends with all of S.
// Ring: NCCL's ring, each block passed on p−1 times; direct: every rank sends its block to
// every peer at once.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/plan.hpp"

namespace meshperf::core::ops::allgather {
namespace {

void build(collective_plan& plan, std::size_t elements, std::size_t) {
    plan.steps = plan.algo == collective_algo::direct
                     ? direct_allgather_steps(plan.ranks, plan.rank, elements)
                     : ops::from_ring(ring_allgather_steps(plan.ranks, plan.rank), elements, plan.ranks, plan.rank);
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte>) noexcept {
    const auto own = ring_chunk(plan.send_elements, plan.ranks, plan.rank);
    ops::fill_absent(plan.element, send, 0, plan.send_elements);
    ops::fill_own(plan.element, plan.rank, send, own.first, own.count);
}

// Every chunk against its owner's values.
std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte> send, std::span<const std::byte>) {
    std::uint64_t wrong = 0;
    for (unsigned q = 0; q < plan.ranks; ++q) {
        const auto c = ring_chunk(plan.send_elements, plan.ranks, q);
        wrong += ops::count_wrong_range(plan.element, send, c.first, c.count, 0, [q](std::size_t i) { return test_value(q, i); });
    }
    return wrong;
}

std::uint64_t ring_link_bytes(unsigned ranks, dtype element, std::uint64_t size, unsigned rank) {
    return ops::ring_sent_bytes(ring_allgather_steps(ranks, rank), ranks, element, size);
}

alpha_beta_terms flat_cost(model_algo algo, double s, unsigned n) {
    const double nm1 = n - 1.0, frac = nm1 / n;
    if (algo == model_algo::ring) return {nm1, frac * s};
    return {static_cast<double>(ops::ceil_log2(n)), frac * s};  // recursive doubling
}

constexpr collective_algo algos[] = {collective_algo::ring, collective_algo::direct};
constexpr model_algo model_algos[] = {model_algo::ring, model_algo::recursive_doubling};
constexpr measured_prediction predictions[] = {
    {collective_algo::ring, plan_formula{collective_op::allgather, model_algo::ring, ""}, std::nullopt},
    {collective_algo::direct,
     plan_formula{collective_op::alltoall, model_algo::pairwise,
                  "direct all-gather sends S/p to every peer, as all-to-all does: modelled as the pairwise all-to-all "
                  "(p-1 steps); the measured one sends to all peers at once"},
     std::nullopt},
};

constexpr collective_op_traits traits{
    .op = collective_op::allgather,
    .name = "allgather",
    .algos = algos,
    .per_rank_blocks = true,
    .busbw_factor = ops::one_pass_factor,
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = ops::blocks_to_peers,
    .ring_link_bytes = ring_link_bytes,
    .model_name = "all_gather",
    .model_algos = model_algos,
    .flat_cost = flat_cost,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::allgather

namespace meshperf::core {

extern const collective_op_traits allgather_op = ops::allgather::traits;

}  // namespace meshperf::core
