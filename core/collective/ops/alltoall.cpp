// All-to-all: rank r sends block q of its S bytes to rank q, and receives block r of every
// rank's into block q of its receive buffer. Direct: every block sent at once; block r stays.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/plan.hpp"

namespace meshperf::core::ops::alltoall {
namespace {

void build(collective_plan& plan, std::size_t elements, std::size_t) {
    plan.recv_elements = elements;
    plan.self_copy = alltoall_block(elements, plan.ranks, plan.rank);
    plan.steps = direct_alltoall_steps(plan.ranks, plan.rank, elements);
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte> recv) noexcept {
    ops::fill_own(plan.element, plan.rank, send, 0, plan.send_elements);
    ops::fill_absent(plan.element, recv, 0, plan.recv_elements);
}

// Block q of rank r's receive buffer is block r of rank q's send buffer.
std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte>, std::span<const std::byte> recv) {
    const auto n = plan.send_elements;
    const unsigned p = plan.ranks;
    const auto src = alltoall_block(n, p, plan.rank);
    std::uint64_t wrong = 0;
    for (unsigned q = 0; q < p; ++q) {
        const auto b = alltoall_block(n, p, q);
        wrong += ops::count_wrong_range(plan.element, recv, b.first, b.count, 0,
                                        [&](std::size_t i) { return test_value(q, src.first + (i - b.first)); });
    }
    return wrong;
}

alpha_beta_terms flat_cost(model_algo, double s, unsigned n) {
    const double nm1 = n - 1.0, frac = nm1 / n;
    return {nm1, frac * s};  // pairwise: p−1 exchange rounds
}

constexpr collective_algo algos[] = {collective_algo::direct};
constexpr model_algo model_algos[] = {model_algo::pairwise};
constexpr measured_prediction predictions[] = {
    {collective_algo::direct,
     plan_formula{collective_op::alltoall, model_algo::pairwise,
                  "modelled as pairwise exchange (p-1 steps); the measured direct all-to-all sends to all peers at once"},
     std::nullopt},
};

constexpr collective_op_traits traits{
    .op = collective_op::alltoall,
    .name = "alltoall",
    .algos = algos,
    .per_rank_blocks = true,
    .busbw_factor = ops::one_pass_factor,
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = ops::blocks_to_peers,
    .model_name = "all_to_all",
    .model_algos = model_algos,
    .flat_cost = flat_cost,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::alltoall

namespace meshperf::core {

extern const collective_op_traits alltoall_op = ops::alltoall::traits;

}  // namespace meshperf::core
