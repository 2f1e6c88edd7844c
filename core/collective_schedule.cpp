#include "core/collective_schedule.hpp"

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
    if (ranks == 1) return steps;
    // Reduce-scatter: at step s a rank sends chunk (rank − s) and receives chunk
    // (rank − s − 1), adding it in. After p−1 steps the chunk received last,
    // (rank − (p−1) + ... ) = (rank + 1) mod p, holds every rank's contribution.
    for (unsigned s = 0; s + 1 < ranks; ++s)
        steps.push_back({minus_mod(rank, s, ranks), minus_mod(rank, s + 1, ranks), true});
    // All-gather: pass the completed chunks around, starting with the one this rank owns.
    for (unsigned s = 0; s + 1 < ranks; ++s)
        steps.push_back({minus_mod(rank + 1, s, ranks), minus_mod(rank, s, ranks), false});
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

}  // namespace meshperf::core
