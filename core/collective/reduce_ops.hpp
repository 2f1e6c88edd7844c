#pragma once
/// The arithmetic of measured all-reduce and reduce-scatter: element-wise sums in the run's
/// data type, and the test values whose sums are exact, so `--verify` can count wrong
/// elements as nccl-tests' #wrong column does. Host code; the GPU path has its own kernels
/// with the same rounding.
#include "core/collective/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace meshperf::core {

// The element types are core::dtype (core/collective/dtype.hpp): bf16, fp16, fp32.

/// bfloat16 and IEEE half from float, rounding to nearest even (NaN stays NaN, overflow
/// becomes infinity); and back to float, exactly.
std::uint16_t to_bfloat16(float) noexcept;
float from_bfloat16(std::uint16_t) noexcept;
std::uint16_t to_half(float) noexcept;
float from_half(std::uint16_t) noexcept;

/// acc[i] += in[i] for every element, in `type` (bf16 and fp16: the sum computed in float and
/// rounded once, as GPU kernels do). Both spans hold bytes of whole elements, of equal length.
void reduce_sum(dtype type, std::span<std::byte> acc, std::span<const std::byte> in) noexcept;

/// The test value of element `index` on rank `rank`: a small integer (0..3), so that any
/// sum over at most 64 ranks is exact in every dtype (bf16 holds integers up to 256 exactly).
float test_value(unsigned rank, std::size_t index) noexcept;

/// Fills a buffer of `type` elements with rank `rank`'s test values, element `first` onwards.
void fill_test_values(dtype type, unsigned rank, std::span<std::byte> out, std::size_t first = 0) noexcept;

/// Counts elements of `buffer` (elements first.. onwards) that differ from the sum of the
/// test values over `ranks` ranks: nccl-tests' #wrong.
std::uint64_t count_wrong_sums(dtype type, unsigned ranks, std::span<const std::byte> buffer, std::size_t first = 0) noexcept;

/// Element `index` of a buffer of `type` elements, as a float (exact for every dtype).
/// The buffer must hold at least index + 1 elements.
float element_value(dtype type, std::span<const std::byte> buffer, std::size_t index) noexcept;

/// Relative tolerance of a sum of `ranks` values in `type`, summed in any order (ring, tree)
/// with reduce_sum's rounding: γ = p·u / (1 − p·u), u the unit roundoff (2^-24 fp32, 2^-11
/// fp16, 2^-8 bf16). The classic bound for p − 1 additions is γ with p − 1; the extra
/// rounding covers the float sum rounded again to bf16 or fp16. It bounds the error
/// against the sum of the magnitudes, which is |expected| when the inputs share one sign.
double sum_tolerance(dtype type, unsigned ranks) noexcept;

/// nccl-tests' #wrong with a tolerance: counts elements i of `got` (of `type`) with
/// |got[i] − expected[i]| > relative_tolerance × |expected[i]|, a NaN or an infinity where
/// the expected value is finite counting as wrong; elements that one side has and the other
/// lacks (the counts differ) count as wrong too. relative_tolerance 0 asks for exact sums.
std::uint64_t count_wrong(dtype type, std::span<const std::byte> got, std::span<const double> expected,
                          double relative_tolerance) noexcept;

}  // namespace meshperf::core
