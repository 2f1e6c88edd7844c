#include "core/collective/plan.hpp"

#include "core/collective/spec.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace meshperf::core {

collective_plan plan_collective(collective_op op, collective_algo algo, unsigned ranks, unsigned rank, dtype element,
                                std::uint64_t size_bytes) {
    if (const auto why = collective_shape_problem(op, algo, ranks, element, size_bytes); !why.empty())
        throw spec_error(fmt::format("{} over {} ranks on {} B: {}", to_string(op), ranks, size_bytes, why));
    if (rank >= ranks) throw spec_error(fmt::format("rank {} is outside the {} ranks", rank, ranks));
    const auto& traits = op_traits(op);
    collective_plan plan;
    plan.op = op;
    plan.algo = algo;
    plan.ranks = ranks;
    plan.rank = rank;
    plan.element = element;
    plan.element_bytes = traits.moves_bytes ? 1 : dtype_bytes(element);
    const std::size_t elements = size_bytes / plan.element_bytes;
    plan.send_elements = elements;
    traits.build(plan, elements, std::max<std::size_t>(1, pipeline_piece_bytes / plan.element_bytes));
    plan.times_link_from_left = algo == collective_algo::ring && !(traits.ring_is_chain && rank == 0);
    return plan;
}

std::vector<unsigned> data_peers(const collective_plan& plan) {
    std::set<unsigned> peers;
    for (const auto& s : plan.steps) {
        for (const auto& t : s.sends) peers.insert(t.peer);
        for (const auto& t : s.recvs) peers.insert(t.peer);
    }
    return {peers.begin(), peers.end()};
}

void fill_inputs(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte> recv) noexcept {
    op_traits(plan.op).fill_inputs(plan, send, recv);
}

std::uint64_t count_wrong_outputs(const collective_plan& plan, std::span<const std::byte> send,
                                  std::span<const std::byte> recv) {
    return op_traits(plan.op).count_wrong(plan, send, recv);
}

}  // namespace meshperf::core
