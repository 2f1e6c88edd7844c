// core/collective/schedule and core/collective/reduce_ops: the ring all-reduce schedule simulated for
// p = 2..17 on real buffers (every rank ends with the exact sums, every send matches the
// neighbour's receive), chunk boundaries, the dissemination barrier and pairwise
// all-to-all covering every pair, and the reduction arithmetic per data type. Below, with
// tests/unit/schedule_simulator.hpp: ring all-reduce, reduce-scatter and all-gather alone,
// direct all-gather and all-to-all, for counts 0, 1, p−1, p, p+1, primes and 3p+2, and the
// elements each rank sends against the busbw factors.
#include "core/collective/schedule.hpp"
#include "core/error.hpp"
#include "core/collective/reduce_ops.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <set>
#include <vector>

using namespace meshperf::core;

TEST_CASE("ring chunks: cover the buffer exactly, in order, differing by at most one element") {
    for (unsigned p = 1; p <= 17; ++p)
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{p - 1}, std::size_t{p}, std::size_t{1000}, std::size_t{1021}}) {
            std::size_t next = 0, lo = n, hi = 0;
            for (unsigned c = 0; c < p; ++c) {
                const auto r = ring_chunk(n, p, c);
                CHECK(r.first == next);
                next += r.count;
                lo = std::min(lo, r.count);
                hi = std::max(hi, r.count);
            }
            CHECK(next == n);
            CHECK(hi - lo <= 1);
        }
    CHECK_THROWS_AS(ring_chunk(10, 0, 0), spec_error);
    CHECK_THROWS_AS(ring_chunk(10, 4, 4), spec_error);
}

TEST_CASE("ring all-reduce: simulated over p = 2..17 ranks, every rank ends with the exact sums") {
    for (const auto type : {dtype::fp32, dtype::bf16, dtype::fp16}) {
        for (unsigned p = 2; p <= 17; ++p) {
            const std::size_t elements = 3 * p + 2;  // chunks of unequal size
            const std::size_t w = dtype_bytes(type);
            std::vector<std::vector<std::byte>> buf(p, std::vector<std::byte>(elements * w));
            for (unsigned r = 0; r < p; ++r) fill_test_values(type, r, buf[r]);
            std::vector<std::vector<ring_step>> steps(p);
            for (unsigned r = 0; r < p; ++r) {
                steps[r] = ring_allreduce_steps(p, r);
                REQUIRE(steps[r].size() == 2 * (p - 1));
            }
            for (std::size_t s = 0; s < 2 * (p - 1); ++s) {
                // All sends of a step leave before any receive lands, as on the wire.
                std::vector<std::vector<std::byte>> wire(p);
                for (unsigned r = 0; r < p; ++r) {
                    const auto c = ring_chunk(elements, p, steps[r][s].send_chunk);
                    wire[r].assign(buf[r].begin() + c.first * w, buf[r].begin() + (c.first + c.count) * w);
                }
                for (unsigned r = 0; r < p; ++r) {
                    const unsigned left = (r + p - 1) % p;
                    CHECK(steps[left][s].send_chunk == steps[r][s].recv_chunk);
                    CHECK(steps[r][s].reduce == (s < p - 1));
                    const auto c = ring_chunk(elements, p, steps[r][s].recv_chunk);
                    std::span<std::byte> dst(buf[r].data() + c.first * w, c.count * w);
                    if (steps[r][s].reduce) reduce_sum(type, dst, wire[left]);
                    else std::copy(wire[left].begin(), wire[left].end(), dst.begin());
                }
                if (s == p - 2)  // reduce-scatter done: each rank's owned chunk is complete
                    for (unsigned r = 0; r < p; ++r) {
                        const auto c = ring_chunk(elements, p, ring_owned_chunk(p, r));
                        CHECK(count_wrong_sums(type, p, std::span(buf[r]).subspan(c.first * w, c.count * w), c.first) == 0);
                    }
            }
            for (unsigned r = 0; r < p; ++r) CHECK(count_wrong_sums(type, p, buf[r]) == 0);
            // ... and the verification notices one wrong element.
            fill_test_values(type, 0, std::span(buf[1]).subspan(w * 2, w), 2);
            CHECK(count_wrong_sums(type, p, buf[1]) == 1);
        }
    }
}

TEST_CASE("ring all-reduce: one rank has nothing to do; a bad rank is refused") {
    CHECK(ring_allreduce_steps(1, 0).empty());
    CHECK_THROWS_AS(ring_allreduce_steps(4, 4), spec_error);
    CHECK_THROWS_AS(ring_allreduce_steps(0, 0), spec_error);
}

TEST_CASE("dissemination barrier: ceil(log2 p) rounds after which every rank has heard from every rank") {
    for (unsigned p = 1; p <= 17; ++p) {
        const unsigned rounds = p == 1 ? 0 : static_cast<unsigned>(std::ceil(std::log2(p)));
        // heard[r]: ranks whose arrival r knows of.
        std::vector<std::set<unsigned>> heard(p);
        for (unsigned r = 0; r < p; ++r) heard[r] = {r};
        std::vector<std::vector<barrier_round>> plan(p);
        for (unsigned r = 0; r < p; ++r) {
            plan[r] = dissemination_barrier(p, r);
            REQUIRE(plan[r].size() == rounds);
        }
        for (unsigned k = 0; k < rounds; ++k) {
            auto before = heard;
            for (unsigned r = 0; r < p; ++r) {
                CHECK(plan[plan[r][k].to][k].from == r);  // the one signalled waits for this rank
                heard[plan[r][k].to].insert(before[r].begin(), before[r].end());
            }
        }
        for (unsigned r = 0; r < p; ++r) CHECK(heard[r].size() == p);
    }
}

TEST_CASE("pairwise all-to-all: p-1 steps, every ordered pair exactly once, sends meet receives") {
    for (unsigned p = 2; p <= 17; ++p) {
        std::set<std::pair<unsigned, unsigned>> pairs;
        for (unsigned r = 0; r < p; ++r) {
            const auto steps = pairwise_alltoall_steps(p, r);
            REQUIRE(steps.size() == p - 1);
            for (std::size_t s = 0; s < steps.size(); ++s) {
                CHECK(steps[s].to != r);
                CHECK(pairwise_alltoall_steps(p, steps[s].to)[s].from == r);
                CHECK(pairs.insert({r, steps[s].to}).second);
            }
        }
        CHECK(pairs.size() == p * (p - 1));
    }
}

TEST_CASE("reduce ops: bfloat16 rounds to nearest even and sums as GPU kernels do") {
    CHECK(from_bfloat16(to_bfloat16(1.0f)) == 1.0f);
    CHECK(from_bfloat16(to_bfloat16(256.0f)) == 256.0f);
    CHECK(from_bfloat16(to_bfloat16(257.0f)) == 256.0f);  // tie: to even
    CHECK(from_bfloat16(to_bfloat16(259.0f)) == 260.0f);  // tie: to even (upwards)
    CHECK(from_bfloat16(to_bfloat16(-3.5f)) == -3.5f);
    CHECK(std::isnan(from_bfloat16(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(std::isinf(from_bfloat16(to_bfloat16(std::numeric_limits<float>::infinity()))));
    // IEEE half: exact round trips, ties to even, subnormals, overflow.
    CHECK(from_half(to_half(1.0f)) == 1.0f);
    CHECK(to_half(1.0f) == 0x3c00);
    CHECK(to_half(65504.0f) == 0x7bff);
    CHECK(to_half(65520.0f) == 0x7c00);                     // rounds past the largest: infinity
    CHECK(from_half(to_half(2049.0f)) == 2048.0f);          // tie: to even
    CHECK(from_half(to_half(2051.0f)) == 2052.0f);
    CHECK(from_half(0x0001) == std::ldexp(1.0f, -24));       // smallest subnormal
    CHECK(to_half(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(to_half(std::ldexp(1.0f, -25)) == 0x0000);         // tie at half the smallest: to even (0)
    CHECK(to_half(-0.0f) == 0x8000);
    CHECK(std::isnan(from_half(to_half(std::numeric_limits<float>::quiet_NaN()))));
    for (std::uint32_t h = 0; h < 0x7c00; ++h) CHECK(to_half(from_half(static_cast<std::uint16_t>(h))) == h);

    std::vector<std::byte> a(4 * 2), b(4 * 2);
    fill_test_values(dtype::bf16, 1, a);
    fill_test_values(dtype::bf16, 2, b);
    reduce_sum(dtype::bf16, a, b);
    CHECK(count_wrong_sums(dtype::bf16, 3, a) > 0);  // ranks 1 and 2 only: not the sum over 0..2
    fill_test_values(dtype::bf16, 0, b);
    reduce_sum(dtype::bf16, a, b);
    CHECK(count_wrong_sums(dtype::bf16, 3, a) == 0);
}

// ---- Simulated over every count (schedule_simulator.hpp): ring all-reduce, reduce-scatter
// and all-gather alone, direct all-gather and all-to-all, pairwise all-to-all. ----

#include "core/collective/figures.hpp"
#include "tests/unit/schedule_simulator.hpp"

namespace collective_schedule_test {  // one per test file: the unit tests are built in batches (unity build)

namespace {

// Each rank's sends within one ring pass are distinct chunks: no chunk goes twice.
void check_distinct_sends(const std::vector<ring_step>& steps, std::size_t from, std::size_t to) {
    std::set<unsigned> chunks;
    for (std::size_t s = from; s < to; ++s) CHECK(chunks.insert(steps[s].send_chunk).second);
}

std::vector<double> expected_test_values(std::size_t elements, auto owner) {
    std::vector<double> want(elements);
    for (std::size_t i = 0; i < elements; ++i) want[i] = test_value(owner(i), i);
    return want;
}

}  // namespace

TEST_CASE("ring all-reduce: every count from 0 to primes, every dtype, bytes sent match the busbw factor") {
    for (const auto type : {dtype::fp32, dtype::bf16, dtype::fp16})
        for (unsigned p = 2; p <= 17; ++p)
            for (const std::size_t n : schedule_sim::counts(p)) {
                CAPTURE(p);
                CAPTURE(n);
                std::vector<schedule_sim::buffer> bufs(p, schedule_sim::buffer(n * dtype_bytes(type)));
                std::vector<rank_schedule> plans;
                for (unsigned r = 0; r < p; ++r) {
                    fill_test_values(type, r, bufs[r]);
                    const auto steps = ring_allreduce_steps(p, r);
                    REQUIRE(steps.size() == 2 * (p - 1));
                    check_distinct_sends(steps, 0, p - 1);
                    check_distinct_sends(steps, p - 1, steps.size());
                    plans.push_back(schedule_sim::from_ring(steps, n, p, r));
                }
                const auto seen = schedule_sim::run(type, plans, bufs, bufs);
                for (unsigned r = 0; r < p; ++r) CHECK(count_wrong_sums(type, p, bufs[r]) == 0);
                if (n % p == 0)
                    for (unsigned r = 0; r < p; ++r) CHECK(seen.sent_elements[r] == doctest::Approx(busbw_factor(collective_op::allreduce, p) * n));
            }
}

TEST_CASE("ring reduce-scatter alone: p-1 steps, rank r ends with the full sum of chunk r") {
    for (unsigned p = 2; p <= 17; ++p)
        for (const std::size_t n : schedule_sim::counts(p)) {
            CAPTURE(p);
            CAPTURE(n);
            std::vector<schedule_sim::buffer> bufs(p, schedule_sim::buffer(n * 4));
            std::vector<rank_schedule> plans;
            for (unsigned r = 0; r < p; ++r) {
                fill_test_values(dtype::fp32, r, bufs[r]);
                const auto steps = ring_reduce_scatter_steps(p, r);
                REQUIRE(steps.size() == p - 1);
                for (const auto& s : steps) CHECK(s.reduce);
                plans.push_back(schedule_sim::from_ring(steps, n, p, r));
            }
            const auto seen = schedule_sim::run(dtype::fp32, plans, bufs, bufs);
            CHECK_FALSE(seen.repeated_send);
            for (unsigned r = 0; r < p; ++r) {
                const auto c = ring_chunk(n, p, r);
                CHECK(count_wrong_sums(dtype::fp32, p, std::span(bufs[r]).subspan(c.first * 4, c.count * 4), c.first) == 0);
                if (n % p == 0) CHECK(seen.sent_elements[r] == doctest::Approx(busbw_factor(collective_op::reduce_scatter, p) * n));
            }
        }
    CHECK(ring_reduce_scatter_steps(1, 0).empty());
    CHECK_THROWS_AS(ring_reduce_scatter_steps(3, 3), spec_error);
}

TEST_CASE("all-gather, ring and direct: every rank ends with every rank's block") {
    for (unsigned p = 2; p <= 17; ++p)
        for (const std::size_t n : schedule_sim::counts(p))
            for (const bool ring : {true, false}) {
                CAPTURE(p);
                CAPTURE(n);
                CAPTURE(ring);
                auto bufs = schedule_sim::filled(p, n, [&](unsigned r, std::size_t i) {
                    const auto c = ring_chunk(n, p, r);
                    return i >= c.first && i < c.first + c.count;
                });
                std::vector<rank_schedule> plans;
                for (unsigned r = 0; r < p; ++r) {
                    if (ring) {
                        const auto steps = ring_allgather_steps(p, r);
                        REQUIRE(steps.size() == p - 1);
                        for (const auto& s : steps) CHECK_FALSE(s.reduce);
                        plans.push_back(schedule_sim::from_ring(steps, n, p, r));
                    } else {
                        plans.push_back(direct_allgather_steps(p, r, n));
                        REQUIRE(plans.back().size() == (n ? 1u : 0u));
                    }
                }
                const auto seen = schedule_sim::run(dtype::fp32, plans, bufs, bufs);
                CHECK_FALSE(seen.repeated_send);
                const auto want = expected_test_values(n, [&](std::size_t i) {
                    unsigned q = 0;
                    while (i >= ring_chunk(n, p, q).first + ring_chunk(n, p, q).count) ++q;
                    return q;
                });
                for (unsigned r = 0; r < p; ++r) {
                    CHECK(count_wrong(dtype::fp32, bufs[r], want, 0) == 0);
                    if (n % p == 0) CHECK(seen.sent_elements[r] == doctest::Approx(busbw_factor(collective_op::allgather, p) * n));
                }
            }
}

TEST_CASE("all-to-all, direct and pairwise: rank r's block q lands as rank q's block r") {
    for (unsigned p = 2; p <= 17; ++p)
        for (const std::size_t n : {std::size_t{0}, std::size_t{p}, std::size_t{2 * p}, std::size_t{7 * p}})
            for (const bool direct : {true, false}) {
                CAPTURE(p);
                CAPTURE(n);
                CAPTURE(direct);
                // Send values that say whose they are: 1000 × rank + index (exact in fp32).
                std::vector<schedule_sim::buffer> send(p, schedule_sim::buffer(n * 4)), recv(p, schedule_sim::buffer(n * 4));
                for (unsigned r = 0; r < p; ++r)
                    for (std::size_t i = 0; i < n; ++i) {
                        const float v = static_cast<float>(1000 * r + i);
                        std::memcpy(send[r].data() + i * 4, &v, 4);
                    }
                std::vector<rank_schedule> plans;
                for (unsigned r = 0; r < p; ++r) {
                    if (direct) {
                        plans.push_back(direct_alltoall_steps(p, r, n));
                        REQUIRE(plans.back().size() == (n ? 1u : 0u));
                    } else {
                        rank_schedule plan;
                        for (const auto& s : pairwise_alltoall_steps(p, r))
                            plan.push_back({{{s.to, alltoall_block(n, p, s.to), false}}, {{s.from, alltoall_block(n, p, s.from), false}}});
                        REQUIRE(plan.size() == p - 1);
                        plans.push_back(plan);
                    }
                    const auto own = alltoall_block(n, p, r);  // the local copy
                    std::copy_n(send[r].begin() + own.first * 4, own.count * 4, recv[r].begin() + own.first * 4);
                }
                // Pairwise steps may be 0-element messages; a send buffer and a receive buffer never alias.
                const auto seen = schedule_sim::run(dtype::fp32, plans, send, recv);
                CHECK_FALSE(seen.repeated_send);
                for (unsigned r = 0; r < p; ++r) {
                    std::vector<double> want(n);
                    for (std::size_t i = 0; i < n; ++i) want[i] = 1000.0 * (i / (n / p)) + r * (n / p) + i % (n / p);
                    CHECK(count_wrong(dtype::fp32, recv[r], want, 0) == 0);
                    CHECK(seen.sent_elements[r] == doctest::Approx(busbw_factor(collective_op::alltoall, p) * n));
                }
            }
}

TEST_CASE("all-to-all: a count that does not divide by p is refused, saying what would") {
    CHECK_THROWS_WITH_AS(direct_alltoall_steps(4, 0, 10),
                         "all-to-all over 4 ranks needs an element count divisible by 4, not 10: use a multiple of 4 such as 12",
                         spec_error);
    CHECK_THROWS_AS(alltoall_block(17, 16, 0), spec_error);
    CHECK_THROWS_AS(alltoall_block(16, 16, 16), spec_error);
    CHECK(alltoall_block(48, 16, 15) == element_range{45, 3});
    CHECK(direct_alltoall_steps(1, 0, 5).empty());
}

}  // namespace collective_schedule_test
