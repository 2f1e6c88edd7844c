#include "core/collective/schedule.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

namespace meshperf::core {
namespace {

void require_rank(unsigned ranks, unsigned rank) {
    if (ranks == 0) throw spec_error("a collective needs at least one rank");
    if (rank >= ranks) throw spec_error(fmt::format("rank {} is outside 0..{}", rank, ranks - 1));
}

// (a − b) mod p for unsigned values without wrapping below zero.
unsigned minus_mod(unsigned a, unsigned b, unsigned p) { return (a + p - b % p) % p; }

// One pass around the ring, p−1 steps: at step s send chunk (first − s), receive the chunk
// before it. Every ring schedule is one or two of these passes.
void ring_pass(std::vector<ring_step>& steps, unsigned ranks, unsigned first, bool reduce) {
    for (unsigned s = 0; s + 1 < ranks; ++s)
        steps.push_back({minus_mod(first, s, ranks), minus_mod(first, s + 1, ranks), reduce});
}

// The one step of a direct schedule: a message to and from every other rank q, of the
// elements send_range(q) and recv_range(q).
template <class SendRange, class RecvRange>
rank_schedule all_peers(unsigned ranks, unsigned rank, SendRange send_range, RecvRange recv_range) {
    schedule_step step;
    for (unsigned q = 0; q < ranks; ++q) {
        if (q == rank) continue;
        step.sends.push_back({q, send_range(q), false});
        step.recvs.push_back({q, recv_range(q), false});
    }
    return {step};
}

}  // namespace

element_range ring_chunk(std::size_t elements, unsigned ranks, unsigned chunk) {
    require_rank(ranks, chunk);
    const std::size_t base = elements / ranks, extra = elements % ranks;
    const std::size_t first = chunk * base + std::min<std::size_t>(chunk, extra);
    return {first, base + (chunk < extra ? 1 : 0)};
}

std::vector<ring_step> ring_allreduce_steps(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    std::vector<ring_step> steps;
    // Reduce-scatter: at step s a rank sends chunk (rank − s) and receives chunk
    // (rank − s − 1), adding it in. After p−1 steps the chunk received last,
    // (rank − (p−1)) = (rank + 1) mod p, holds every rank's contribution.
    ring_pass(steps, ranks, rank, true);
    // All-gather: pass the completed chunks around, starting with the one this rank owns.
    ring_pass(steps, ranks, (rank + 1) % ranks, false);
    return steps;
}

std::vector<ring_step> ring_reduce_scatter_steps(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    std::vector<ring_step> steps;
    // Shifted by one against the all-reduce's first pass, so that rank r ends owning chunk r.
    ring_pass(steps, ranks, minus_mod(rank, 1, ranks), true);
    return steps;
}

std::vector<ring_step> ring_allgather_steps(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    std::vector<ring_step> steps;
    ring_pass(steps, ranks, rank, false);
    return steps;
}

unsigned ring_owned_chunk(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    return (rank + 1) % ranks;
}

std::vector<barrier_round> dissemination_barrier(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    std::vector<barrier_round> rounds;
    for (unsigned distance = 1; distance < ranks; distance *= 2)
        rounds.push_back({(rank + distance) % ranks, minus_mod(rank, distance, ranks)});
    return rounds;
}

std::vector<exchange_step> pairwise_alltoall_steps(unsigned ranks, unsigned rank) {
    require_rank(ranks, rank);
    std::vector<exchange_step> steps;
    for (unsigned s = 1; s < ranks; ++s) steps.push_back({(rank + s) % ranks, minus_mod(rank, s, ranks)});
    return steps;
}

rank_schedule direct_allgather_steps(unsigned ranks, unsigned rank, std::size_t elements) {
    require_rank(ranks, rank);
    if (ranks == 1 || elements == 0) return {};
    return all_peers(ranks, rank, [&](unsigned) { return ring_chunk(elements, ranks, rank); },
                     [&](unsigned q) { return ring_chunk(elements, ranks, q); });
}

element_range alltoall_block(std::size_t elements, unsigned ranks, unsigned block) {
    require_rank(ranks, block);
    if (elements % ranks != 0)
        throw spec_error(fmt::format("all-to-all over {} ranks needs an element count divisible by {}, not {}: "
                                     "use a multiple of {} such as {}", ranks, ranks, elements, ranks,
                                     (elements / ranks + 1) * ranks));
    const std::size_t each = elements / ranks;
    return {block * each, each};
}

rank_schedule direct_alltoall_steps(unsigned ranks, unsigned rank, std::size_t elements) {
    require_rank(ranks, rank);
    alltoall_block(elements, ranks, rank);  // refuses a count that does not divide
    if (ranks == 1 || elements == 0) return {};
    const auto block = [&](unsigned q) { return alltoall_block(elements, ranks, q); };
    return all_peers(ranks, rank, block, block);
}

}  // namespace meshperf::core
