#include "core/collective/ops/op_helpers.hpp"

#include "core/collective/pipelined_schedule.hpp"

#include <cstring>

namespace meshperf::core::ops {
namespace {

void store_value(dtype type, std::span<std::byte> buf, std::size_t index, float v) noexcept {
    if (type == dtype::fp32) {
        std::memcpy(buf.data() + index * 4, &v, 4);
        return;
    }
    const std::uint16_t h = type == dtype::bf16 ? to_bfloat16(v) : to_half(v);
    std::memcpy(buf.data() + index * 2, &h, 2);
}

}  // namespace

rank_schedule from_ring(const std::vector<ring_step>& steps, std::size_t elements, unsigned p, unsigned rank) {
    rank_schedule plan;
    plan.reserve(steps.size());
    for (const auto& s : steps)
        plan.push_back({{{(rank + 1) % p, ring_chunk(elements, p, s.send_chunk), false}},
                        {{(rank + p - 1) % p, ring_chunk(elements, p, s.recv_chunk), s.reduce}}});
    return plan;
}

std::uint64_t ring_sent_bytes(const std::vector<ring_step>& steps, unsigned ranks, dtype element, std::uint64_t size_bytes) {
    const std::uint64_t bytes = dtype_bytes(element), elements = size_bytes / bytes;
    std::uint64_t sent = 0;
    for (const auto& s : steps) sent += ring_chunk(elements, ranks, s.send_chunk).count;
    return sent * bytes;
}

void fill_absent(dtype type, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept {
    for (std::size_t i = first; i < first + count; ++i) store_value(type, buf, i, -1.0f);
}

void fill_own(dtype type, unsigned rank, std::span<std::byte> buf, std::size_t first, std::size_t count) noexcept {
    for (std::size_t i = first; i < first + count; ++i) store_value(type, buf, i, test_value(rank, i));
}

double sum_over_ranks(unsigned ranks, std::size_t index) {
    double s = 0;
    for (unsigned r = 0; r < ranks; ++r) s += test_value(r, index);
    return s;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? ~0ull : r;
}

std::uint64_t busiest_tree_rank(unsigned ranks, bool with_parent) {
    std::uint64_t most = 0;
    for (unsigned r = 0; r < ranks; ++r) {
        const auto links = binary_tree(ranks, r);
        most = std::max<std::uint64_t>(most, links.children.size() + (with_parent && links.parent ? 1 : 0));
    }
    return most;
}

std::uint64_t blocks_to_peers(collective_algo, unsigned ranks, dtype, std::uint64_t size) {
    const std::uint64_t p = ranks;
    return mul_sat(p - 1, size / p + (size % p != 0));
}

unsigned ceil_log2(unsigned n) {
    unsigned l = 0;
    while ((1ull << l) < n) ++l;
    return l;
}

double one_pass_factor(double p) { return (p - 1) / p; }

}  // namespace meshperf::core::ops
