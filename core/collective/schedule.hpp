#pragma once
/// Schedules of measured collectives: which rank sends
/// which bytes to which rank at each step, as pure data, so the data path that runs them and
/// the tests that check them share one definition. Ring all-reduce follows NCCL's ring:
/// reduce-scatter then all-gather, 2(p−1) steps, each moving one chunk of about S/p; ring
/// reduce-scatter and all-gather alone take p−1 of them; the dissemination barrier takes
/// ⌈log2 p⌉ rounds; all-to-all is pairwise exchange, p−1 steps, or direct (all peers in one
/// step), as is the direct all-gather. Tree and chain schedules: core/collective/pipelined_schedule.hpp.
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

/// The p−1 steps of rank `rank` in a ring reduce-scatter alone (each moving one chunk of
/// about S/p, S the whole buffer): at step s it sends chunk (rank − s − 1) mod p and
/// receives chunk (rank − s − 2) mod p, adding it in; afterwards rank r holds the full sum
/// of chunk r, the block nccl-tests expects as rank r's output. Empty for one rank.
std::vector<ring_step> ring_reduce_scatter_steps(unsigned ranks, unsigned rank);

/// The p−1 steps of rank `rank` in a ring all-gather alone: rank r starts with chunk r; at
/// step s it sends chunk (rank − s) mod p and receives chunk (rank − s − 1) mod p, copying it
/// over; afterwards every rank holds every chunk. Empty for one rank.
std::vector<ring_step> ring_allgather_steps(unsigned ranks, unsigned rank);

/// One message of a step: `range` of the rank's buffer goes to, or comes from, rank `peer`.
struct transfer {
    unsigned peer = 0;    ///< the rank sent to (a send) or received from (a receive)
    element_range range;  ///< elements read (a send) or written (a receive)
    bool reduce = false;  ///< a receive: added into the buffer (true) or copied over it (false)

    bool operator==(const transfer&) const = default;
};

/// What one rank does at one step: every send of the step leaves, then every receive lands.
/// A send never reads what a receive of the same step writes; two receives of one step write
/// the same elements only when both reduce; a rank sends a peer at most one message a step,
/// so a message is known by its step and its two ranks. In a schedule every rank has the
/// same number of steps, some of them empty, so that step s of rank a sending to b is
/// matched by a receive in step s of rank b from a of the same element count.
struct schedule_step {
    std::vector<transfer> sends;  ///< messages this rank sends at this step
    std::vector<transfer> recvs;  ///< messages this rank receives at this step
};

/// One rank's steps, in order.
using rank_schedule = std::vector<schedule_step>;

/// Direct all-gather in place over a buffer of `elements` elements (the gathered size):
/// one step in which rank r sends its block, ring_chunk(elements, p, r), to every other
/// rank and receives block q from every rank q ≠ r. Empty for one rank or no elements.
rank_schedule direct_allgather_steps(unsigned ranks, unsigned rank, std::size_t elements);

/// Block `block` of an all-to-all buffer of `elements` elements (the per-rank send
/// buffer): elements / ranks elements from block × elements / ranks. Throws spec_error
/// unless elements is a multiple of ranks (blocks of unequal size would not fit the
/// receiver's layout) or block is outside 0..ranks−1.
element_range alltoall_block(std::size_t elements, unsigned ranks, unsigned block);

/// Direct all-to-all (all peers at once): one step in which rank r sends block q of its
/// send buffer to every rank q ≠ r and receives block q of its receive buffer from every
/// rank q ≠ r. Unlike the other schedules it is not in place: sends read the send buffer,
/// receives write the receive buffer; the rank's own block r is a local copy, not in the
/// schedule. Empty for one rank or no elements. Throws spec_error as alltoall_block does.
rank_schedule direct_alltoall_steps(unsigned ranks, unsigned rank, std::size_t elements);

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
