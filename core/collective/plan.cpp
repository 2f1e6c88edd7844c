#include "core/collective/plan.hpp"

#include "core/collective/result.hpp"
#include "core/collective/spec.hpp"
#include "core/error.hpp"
#include "core/collective/pipelined_schedule.hpp"
#include "core/collective/reduce_ops.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <set>

namespace meshperf::core {
namespace {

/// A ring's chunk steps as messages: send to the right neighbour, receive from the left.
rank_schedule from_ring(const std::vector<ring_step>& steps, std::size_t elements, unsigned p, unsigned rank) {
    rank_schedule plan;
    plan.reserve(steps.size());
    for (const auto& s : steps)
        plan.push_back({{{(rank + 1) % p, ring_chunk(elements, p, s.send_chunk), false}},
                        {{(rank + p - 1) % p, ring_chunk(elements, p, s.recv_chunk), s.reduce}}});
    return plan;
}

/// Incast: every sender's S bytes into the receiver's block for it, all in one step.
rank_schedule incast_steps(unsigned ranks, unsigned rank, std::size_t bytes) {
    rank_schedule plan(1);
    if (rank == incast_receiver) {
        for (unsigned q = 0; q < ranks; ++q)
            if (q != incast_receiver) plan[0].recvs.push_back({q, {(q - 1) * bytes, bytes}, false});
    } else {
        plan[0].sends.push_back({incast_receiver, {0, bytes}, false});
    }
    return plan;
}

void store_value(dtype type, std::span<std::byte> buf, std::size_t index, float v) noexcept {
    if (type == dtype::fp32) {
        std::memcpy(buf.data() + index * 4, &v, 4);
        return;
    }
    const std::uint16_t h = type == dtype::bf16 ? to_bfloat16(v) : to_half(v);
    std::memcpy(buf.data() + index * 2, &h, 2);
}

/// Elements [first, first + count) of a buffer set to a value no rank starts with.
void fill_absent(dtype type, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept {
    for (std::size_t i = first; i < first + count; ++i) store_value(type, buf, i, -1.0f);
}

/// Rank `rank`'s test values over elements [first, first + count), value index = element index.
void fill_own(dtype type, unsigned rank, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept {
    for (std::size_t i = first; i < first + count; ++i) store_value(type, buf, i, test_value(rank, i));
}

/// Wrong elements of `got` over [first, first + count), element i expected to be
/// expected(i), compared in slices so that no buffer-sized table of expectations is built.
template <class Expected>
std::uint64_t count_wrong_range(dtype type, std::span<const std::byte> got, std::size_t first, std::size_t count,
                                double tolerance, Expected expected) {
    constexpr std::size_t slice = 1 << 16;
    const std::size_t w = dtype_bytes(type);
    std::vector<double> want;
    std::uint64_t wrong = 0;
    for (std::size_t at = first; at < first + count; at += slice) {
        const auto n = std::min(slice, first + count - at);
        want.resize(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = expected(at + i);
        wrong += count_wrong(type, got.subspan(at * w, n * w), want, tolerance);
    }
    return wrong;
}

double sum_over_ranks(unsigned ranks, std::size_t index) {
    double s = 0;
    for (unsigned r = 0; r < ranks; ++r) s += test_value(r, index);
    return s;
}

}  // namespace

std::byte incast_byte(unsigned sender, std::size_t index) noexcept {
    return static_cast<std::byte>((sender * 37u + index * 11u + 1u) & 0xffu);
}

collective_plan plan_collective(collective_op op, collective_algo algo, unsigned ranks, unsigned rank, dtype element,
                                std::uint64_t size_bytes) {
    if (const auto why = collective_shape_problem(op, algo, ranks, element, size_bytes); !why.empty())
        throw spec_error(fmt::format("{} over {} ranks on {} B: {}", to_string(op), ranks, size_bytes, why));
    if (rank >= ranks) throw spec_error(fmt::format("rank {} is outside the {} ranks", rank, ranks));
    collective_plan plan;
    plan.op = op;
    plan.algo = algo;
    plan.ranks = ranks;
    plan.rank = rank;
    plan.element = element;
    plan.element_bytes = op == collective_op::incast ? 1 : dtype_bytes(element);
    const std::size_t elements = size_bytes / plan.element_bytes;
    const std::size_t piece = std::max<std::size_t>(1, pipeline_piece_bytes / plan.element_bytes);
    plan.send_elements = elements;
    using enum collective_op;
    switch (op) {
    case allreduce:
        plan.steps = algo == collective_algo::tree ? tree_allreduce_steps(ranks, rank, elements, piece)
                                                   : from_ring(ring_allreduce_steps(ranks, rank), elements, ranks, rank);
        break;
    case reduce_scatter: plan.steps = from_ring(ring_reduce_scatter_steps(ranks, rank), elements, ranks, rank); break;
    case allgather:
        plan.steps = algo == collective_algo::direct ? direct_allgather_steps(ranks, rank, elements)
                                                     : from_ring(ring_allgather_steps(ranks, rank), elements, ranks, rank);
        break;
    case broadcast:
        plan.steps = algo == collective_algo::tree ? tree_broadcast_steps(ranks, rank, 0, elements, piece)
                                                   : chain_broadcast_steps(ranks, rank, 0, elements, piece);
        break;
    case alltoall:
        plan.recv_elements = elements;
        plan.self_copy = alltoall_block(elements, ranks, rank);
        plan.steps = direct_alltoall_steps(ranks, rank, elements);
        break;
    case incast:
        if (rank == incast_receiver) {
            plan.send_elements = 0;
            plan.recv_elements = elements * (ranks - 1);
        }
        plan.steps = incast_steps(ranks, rank, elements);
        break;
    }
    plan.times_link_from_left = algo == collective_algo::ring && !(op == broadcast && rank == 0);
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
    const auto type = plan.element;
    const auto n = plan.send_elements;
    using enum collective_op;
    switch (plan.op) {
    case allreduce:
    case reduce_scatter: fill_own(type, plan.rank, send, 0, n); break;
    case allgather: {
        const auto own = ring_chunk(n, plan.ranks, plan.rank);
        fill_absent(type, send, 0, n);
        fill_own(type, plan.rank, send, own.first, own.count);
        break;
    }
    case broadcast:
        if (plan.rank == 0) fill_own(type, 0, send, 0, n);
        else fill_absent(type, send, 0, n);
        break;
    case alltoall:
        fill_own(type, plan.rank, send, 0, n);
        fill_absent(type, recv, 0, plan.recv_elements);
        break;
    case incast:
        for (std::size_t i = 0; i < n; ++i) send[i] = incast_byte(plan.rank, i);
        std::fill(recv.begin(), recv.end(), std::byte{0xff});
        break;
    }
}

std::uint64_t count_wrong_outputs(const collective_plan& plan, std::span<const std::byte> send,
                                  std::span<const std::byte> recv) {
    const auto type = plan.element;
    const auto n = plan.send_elements;
    const unsigned p = plan.ranks;
    const double tol = sum_tolerance(type, p);
    auto sums = [p](std::size_t i) { return sum_over_ranks(p, i); };
    using enum collective_op;
    switch (plan.op) {
    case allreduce: return count_wrong_range(type, send, 0, n, tol, sums);
    case reduce_scatter: {
        const auto own = ring_chunk(n, p, plan.rank);
        return count_wrong_range(type, send, own.first, own.count, tol, sums);
    }
    case allgather: {
        std::uint64_t wrong = 0;
        for (unsigned q = 0; q < p; ++q) {
            const auto c = ring_chunk(n, p, q);
            wrong += count_wrong_range(type, send, c.first, c.count, 0, [q](std::size_t i) { return test_value(q, i); });
        }
        return wrong;
    }
    case broadcast: return count_wrong_range(type, send, 0, n, 0, [](std::size_t i) { return test_value(0, i); });
    case alltoall: {
        // Block q of rank r's receive buffer is block r of rank q's send buffer.
        std::uint64_t wrong = 0;
        const unsigned r = plan.rank;
        for (unsigned q = 0; q < p; ++q) {
            const auto b = alltoall_block(n, p, q);
            const auto src = alltoall_block(n, p, r);
            wrong += count_wrong_range(type, recv, b.first, b.count, 0,
                                       [&](std::size_t i) { return test_value(q, src.first + (i - b.first)); });
        }
        return wrong;
    }
    case incast: {
        if (plan.rank != incast_receiver) return 0;
        std::uint64_t wrong = 0;
        const std::size_t s = plan.recv_elements / (p - 1);
        for (unsigned q = 1; q < p; ++q)
            for (std::size_t i = 0; i < s; ++i) wrong += recv[(q - 1) * s + i] != incast_byte(q, i);
        return wrong;
    }
    }
    return 0;
}

}  // namespace meshperf::core
