#pragma once
/// What a measured collective reports: the op and
/// algorithm names of `meshperf collective --op/--algo`, which algorithm runs which op, the
/// bytes-moved factors of nccl-tests (busbw = algbw × factor), and Jain's fairness index for
/// incast; each op's part of these is its entry of the op table (core/collective/ops.hpp).
/// S is the nccl-tests "size": the per-rank buffer of all-reduce and broadcast, the gathered buffer of all-gather and reduce-scatter, the per-rank send buffer of all-to-all,
/// and for incast what each sender sends. Rates are bytes per second; times seconds.
#include "core/collective/ops.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace meshperf::core {

/// "allreduce", "allgather", "reduce-scatter", "alltoall", "broadcast", "incast".
std::string_view to_string(collective_op) noexcept;
/// "ring", "tree", "direct".
std::string_view to_string(collective_algo) noexcept;

/// Parses an op name as to_string writes it; '-' and '_' are ignored, so "all-reduce" and
/// "reduce_scatter" are accepted too. Throws spec_error naming the valid ones.
collective_op parse_collective_op(std::string_view);
/// Parses "ring", "tree" or "direct". Throws spec_error naming the valid ones.
collective_algo parse_collective_algo(std::string_view);

/// Whether `algo` runs `op`: ring runs allreduce, allgather, reduce-scatter and broadcast;
/// tree runs allreduce and broadcast; direct runs allgather, alltoall and incast.
bool can_run(collective_algo algo, collective_op op) noexcept;
/// Throws spec_error ("--algo tree cannot run alltoall: use direct") unless can_run.
void require_can_run(collective_algo algo, collective_op op);
/// The algorithm used when none is given: the first of the op's (ring where it runs, else direct).
collective_algo default_algo(collective_op) noexcept;

/// nccl-tests' bus-bandwidth factor for `ranks` ranks: allreduce 2(p−1)/p; allgather,
/// reduce-scatter and alltoall (p−1)/p; broadcast 1; incast p−1 (the receiver's link carries
/// (p−1)·S, so busbw is its total goodput). Throws spec_error for 0 ranks.
double busbw_factor(collective_op, unsigned ranks);

/// algbw = S / t in bytes per second. Throws insane_figure unless seconds is finite and > 0.
double algbw_bytes_per_s(std::uint64_t bytes, double seconds);
/// busbw = algbw × busbw_factor(op, ranks), bytes per second; throws as both of them do.
double busbw_bytes_per_s(collective_op op, unsigned ranks, std::uint64_t bytes, double seconds);

/// Jain's fairness index (Σx)² / (n·Σx²) of the senders' rates x: 1 when all are equal,
/// 1/n when one sender takes everything. Throws spec_error for no rates, and insane_figure
/// for a rate that is not finite or negative, or when every rate is 0 (nothing to share).
double jain_fairness(std::span<const double> rates);

}  // namespace meshperf::core
