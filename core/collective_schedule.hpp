#pragma once
/// Schedules of measured collectives (issue: collectives across N daemons): which rank sends
/// which bytes to which rank at each step, as pure data, so the data path that runs them and
/// the tests that check them share one definition. Ring all-reduce follows NCCL's ring:
/// reduce-scatter then all-gather, 2(p−1) steps, each moving one chunk of about S/p; the
/// dissemination barrier takes ⌈log2 p⌉ rounds; all-to-all is pairwise exchange, p−1 steps.
/// Nothing here does I/O.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshperf::core {

/// A contiguous run of elements of the rank's buffer.
struct element_range {
    std::size_t first = 0;  ///< index of the first element
    std::size_t count = 0;  ///< number of elements (may be 0 when count < ranks)

    bool operator==(const element_range&) const = default;
};

/// Splits `elements` into `ranks` chunks as evenly as they go: the first elements % ranks
/// chunks hold one element more. Chunk c covers [first, first + count). ranks must be >= 1.
element_range ring_chunk(std::size_t elements, unsigned ranks, unsigned chunk);

/// What one rank does at one step of a ring: sends `send` to its right neighbour and
/// receives `recv` from its left neighbour; `reduce` says whether the received elements are
/// added into the buffer (reduce-scatter) or copied over it (all-gather).
struct ring_step {
    unsigned send_chunk = 0;
    unsigned recv_chunk = 0;
    bool reduce = false;
};

/// The 2(p−1) steps of rank `rank` in a ring all-reduce over `ranks` ranks: p−1
/// reduce-scatter steps, after which the rank holds the full sum of chunk (rank+1) mod p,
/// then p−1 all-gather steps. Neighbours: right = (rank+1) mod p, left = (rank−1) mod p.
std::vector<ring_step> ring_allreduce_steps(unsigned ranks, unsigned rank);

/// The chunk rank `rank` holds completely reduced after the reduce-scatter phase.
unsigned ring_owned_chunk(unsigned ranks, unsigned rank);

/// One round of a dissemination barrier: send a token to `to`, wait for one from `from`.
struct barrier_round {
    unsigned to = 0;
    unsigned from = 0;
};

/// The ⌈log2 p⌉ rounds of rank `rank`: in round k it signals (rank + 2^k) mod p and waits
/// for (rank − 2^k) mod p. After the last round every rank has heard, directly or through
/// others, from every rank. Empty for one rank.
std::vector<barrier_round> dissemination_barrier(unsigned ranks, unsigned rank);

/// One step of a pairwise all-to-all: send this rank's block for `to`, receive the block
/// `from` has for this rank.
struct exchange_step {
    unsigned to = 0;
    unsigned from = 0;
};

/// The p−1 steps of rank `rank` in a pairwise all-to-all: at step s (1..p−1) it sends to
/// (rank + s) mod p and receives from (rank − s) mod p, so every pair exchanges exactly once.
std::vector<exchange_step> pairwise_alltoall_steps(unsigned ranks, unsigned rank);

}  // namespace meshperf::core
