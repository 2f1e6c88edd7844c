#pragma once
/// What several op files of core/collective/ops/ share: a ring's chunk steps as messages,
/// the test inputs, the counting of wrong elements against what each must be, and the
/// saturating byte arithmetic of the busiest rank. Pure: no I/O.
#include "core/collective/dtype.hpp"
#include "core/collective/ops.hpp"
#include "core/collective/reduce_ops.hpp"
#include "core/collective/schedule.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace meshperf::core::ops {

/// A ring's chunk steps as messages: send to the right neighbour, receive from the left.
rank_schedule from_ring(const std::vector<ring_step>& steps, std::size_t elements, unsigned p, unsigned rank);

/// Bytes a rank sends to its right neighbour over `steps` of a ring of `ranks` on `size_bytes`.
std::uint64_t ring_sent_bytes(const std::vector<ring_step>& steps, unsigned ranks, dtype element, std::uint64_t size_bytes);

/// Elements [first, first + count) of a buffer set to a value no rank starts with (−1).
void fill_absent(dtype type, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept;

/// Rank `rank`'s test values over elements [first, first + count), value index = element index.
void fill_own(dtype type, unsigned rank, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept;

/// The sum over `ranks` ranks of their test values at `index`.
double sum_over_ranks(unsigned ranks, std::size_t index);

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

/// a × b, or the largest value when it overflows.
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b);

/// The most links of one rank in the binary tree over `ranks` ranks: its children, and its
/// parent too when `with_parent` (a tree all-reduce sends up and down).
std::uint64_t busiest_tree_rank(unsigned ranks, bool with_parent);

/// What a rank sends (or receives) when it exchanges one block of S with each of p−1 peers,
/// whatever the algorithm: (p−1) × ceil(S / p), saturating (a busiest_rank_bytes).
std::uint64_t blocks_to_peers(collective_algo, unsigned ranks, dtype, std::uint64_t size);

/// ⌈log2 n⌉: the rounds of a binary tree or of recursive doubling over n ranks.
unsigned ceil_log2(unsigned n);

/// nccl-tests' factor (p−1)/p, of all-gather, reduce-scatter and all-to-all.
double one_pass_factor(double p);

}  // namespace meshperf::core::ops
