#pragma once
/// One rank's part of one measured collective at one size, as the data path runs it: the
/// schedule of core/collective/schedule.hpp and
/// core/collective/pipelined_schedule.hpp chosen for the op and algorithm, the buffers it reads and
/// writes, the values it starts with and the values it must end with, so `--verify` counts
/// wrong elements as nccl-tests' #wrong does. Every rank builds its own plan from the same
/// inputs, so the ranks agree on every message without exchanging the plan. Pure: no I/O.
#include "core/collective/figures.hpp"
#include "core/collective/schedule.hpp"
#include "core/collective/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace meshperf::core {

/// Elements of the pieces a tree or chain pipelines (core/collective/pipelined_schedule.hpp): 512 KiB
/// of them, so a large buffer streams down a tree while a small one goes in one piece.
inline constexpr std::size_t pipeline_piece_bytes = 512 * 1024;

/// What one rank runs for one op at one size.
struct collective_plan {
    collective_op op = collective_op::allreduce;
    collective_algo algo = collective_algo::ring;
    unsigned ranks = 0;
    unsigned rank = 0;
    dtype element = dtype::fp32;      ///< what a reducing receive sums (reductions only)
    std::size_t element_bytes = 4;    ///< bytes per schedule element: dtype_bytes, 1 for incast
    std::size_t send_elements = 0;    ///< the buffer the sends read (and, in place, the receives write)
    std::size_t recv_elements = 0;    ///< a separate buffer the receives write; 0: in place
    /// A local copy of the rank's own block from the send to the receive buffer, done before
    /// the steps (all-to-all: block r stays on rank r). Same range in both buffers.
    std::optional<element_range> self_copy;
    rank_schedule steps;              ///< the same number of steps on every rank
    /// Ring algorithms: true when this rank receives from its left neighbour, (rank − 1) mod p,
    /// and so times that link for the result (every rank, but rank 0 of a chain broadcast).
    bool times_link_from_left = false;

    bool in_place() const { return recv_elements == 0; }
};

/// The plan of rank `rank` for `op` with `algo` over `ranks` ranks on S = `size_bytes` (a
/// multiple of size_step(op, ranks, element)). Ring all-reduce, reduce-scatter and all-gather
/// are NCCL's ring; ring broadcast is the chain from rank 0; tree all-reduce and broadcast
/// are the pipelined binary tree rooted at rank 0; direct all-gather and all-to-all send to
/// every peer at once; incast has every rank but core::incast_receiver (0) send S bytes to
/// it at once, into a block of its receive buffer per sender. Throws spec_error for fewer
/// than 2 ranks, a rank outside them, an algorithm that cannot run op, or a size that is
/// not a multiple of the step.
collective_plan plan_collective(collective_op op, collective_algo algo, unsigned ranks, unsigned rank, dtype element,
                                std::uint64_t size_bytes);

/// The ranks this rank exchanges data with in `plan` (either way), ascending, without itself.
std::vector<unsigned> data_peers(const collective_plan& plan);

/// Fills the rank's buffers before an iteration: its test values where the op starts with
/// data (core::test_value; incast: incast_byte), a value no rank starts with (−1, or 0xff
/// for incast) where it does not, so data that never arrives is counted wrong. `send` holds
/// send_elements × element_bytes bytes, `recv` recv_elements × element_bytes (empty in place).
void fill_inputs(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte> recv) noexcept;

/// Counts the elements of the rank's result that are wrong after the steps: all-reduce every
/// element against the sum over ranks (within core::sum_tolerance), reduce-scatter its own
/// chunk, all-gather every chunk against its owner's values, broadcast against rank 0's,
/// all-to-all every block against its sender's, incast every byte of every sender (on the
/// receiver; senders have nothing to check).
std::uint64_t count_wrong_outputs(const collective_plan& plan, std::span<const std::byte> send,
                                  std::span<const std::byte> recv);

/// The byte rank `sender` puts at offset `index` of what it sends in an incast: varies with
/// both, so a byte from the wrong sender or the wrong place is caught.
std::byte incast_byte(unsigned sender, std::size_t index) noexcept;

}  // namespace meshperf::core
