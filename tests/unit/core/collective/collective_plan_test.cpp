// core/collective/plan: every op and algorithm, run over the in-memory simulator for
// p = 2..17 and the sizes that catch chunking errors, ends with zero wrong elements on every
// rank; data that is corrupted, or never sent, is counted wrong.
#include "core/collective/plan.hpp"
#include "core/collective/spec.hpp"
#include "core/error.hpp"
#include "tests/unit/schedule_simulator.hpp"

#include <algorithm>
#include <cstring>
#include <doctest/doctest.h>

namespace collective_plan_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

struct case_buffers {
    std::vector<collective_plan> plans;
    std::vector<schedule_sim::buffer> send, recv;
};

case_buffers prepare(collective_op op, collective_algo algo, unsigned p, dtype type, std::uint64_t size) {
    case_buffers c;
    for (unsigned r = 0; r < p; ++r) {
        c.plans.push_back(plan_collective(op, algo, p, r, type, size));
        const auto& plan = c.plans.back();
        c.send.emplace_back(plan.send_elements * plan.element_bytes);
        c.recv.emplace_back(plan.recv_elements * plan.element_bytes);
        fill_inputs(plan, c.send.back(), c.recv.back());
        if (plan.self_copy) {
            const auto w = plan.element_bytes;
            std::memcpy(c.recv.back().data() + plan.self_copy->first * w, c.send.back().data() + plan.self_copy->first * w,
                        plan.self_copy->count * w);
        }
    }
    return c;
}

/// Incast moves bytes (element_bytes 1), which the dtype-based simulator does not: each
/// step's messages are delivered here byte for byte, matched by their two ranks.
void simulate_bytes(case_buffers& c) {
    for (std::size_t s = 0; s < c.plans[0].steps.size(); ++s)
        for (std::size_t r = 0; r < c.plans.size(); ++r)
            for (const auto& in : c.plans[r].steps[s].recvs) {
                const auto& sends = c.plans[in.peer].steps[s].sends;
                const auto out = std::find_if(sends.begin(), sends.end(), [&](const transfer& t) { return t.peer == r; });
                REQUIRE(out != sends.end());
                REQUIRE(out->range.count == in.range.count);
                std::memcpy(c.recv[r].data() + in.range.first, c.send[in.peer].data() + out->range.first, in.range.count);
            }
}

void simulate(case_buffers& c) {
    if (c.plans[0].op == collective_op::incast) return simulate_bytes(c);
    std::vector<rank_schedule> steps;
    for (const auto& plan : c.plans) steps.push_back(plan.steps);
    if (c.plans[0].in_place()) schedule_sim::run(c.plans[0].element, steps, c.send, c.send);
    else schedule_sim::run(c.plans[0].element, steps, c.send, c.recv);
}

std::uint64_t total_wrong(const case_buffers& c) {
    std::uint64_t wrong = 0;
    for (std::size_t r = 0; r < c.plans.size(); ++r) wrong += count_wrong_outputs(c.plans[r], c.send[r], c.recv[r]);
    return wrong;
}

struct op_algo {
    collective_op op;
    collective_algo algo;
};
const op_algo every_case[] = {
    {collective_op::allreduce, collective_algo::ring},      {collective_op::allreduce, collective_algo::tree},
    {collective_op::reduce_scatter, collective_algo::ring}, {collective_op::allgather, collective_algo::ring},
    {collective_op::allgather, collective_algo::direct},    {collective_op::broadcast, collective_algo::ring},
    {collective_op::broadcast, collective_algo::tree},      {collective_op::alltoall, collective_algo::direct},
    {collective_op::incast, collective_algo::direct},
};

}  // namespace

TEST_CASE("every op and algorithm ends with no wrong element, p = 2..17, sizes around the chunking") {
    for (const auto& k : every_case)
        for (unsigned p = 2; p <= 17; ++p)
            for (dtype type : {dtype::fp32, dtype::bf16}) {
                const auto step = size_step(k.op, p, type);
                for (std::uint64_t mult : {1, 2, 3, 7, 64}) {
                    const std::uint64_t size = step * mult;
                    CAPTURE(to_string(k.op));
                    CAPTURE(to_string(k.algo));
                    CAPTURE(p);
                    CAPTURE(size);
                    auto c = prepare(k.op, k.algo, p, type, size);
                    simulate(c);
                    CHECK(total_wrong(c) == 0);
                }
            }
}

TEST_CASE("a tree pipelines a buffer larger than one piece and still ends right") {
    const std::uint64_t size = 3 * pipeline_piece_bytes + 4 * 6;
    for (auto op : {collective_op::allreduce, collective_op::broadcast}) {
        auto c = prepare(op, collective_algo::tree, 6, dtype::fp32, size);
        CHECK(c.plans[0].steps.size() > 4);  // pieces + height: pipelined, not one step per level
        simulate(c);
        CHECK(total_wrong(c) == 0);
    }
}

TEST_CASE("data corrupted on the way, or never delivered, is counted wrong") {
    SUBCASE("a rank's input changed after filling: its contribution to every sum is off") {
        auto c = prepare(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4 * 4 * 10);
        const float bad = 100;
        std::memcpy(c.send[2].data(), &bad, 4);  // element 0 of rank 2
        simulate(c);
        CHECK(total_wrong(c) == 4);  // element 0 is wrong on every rank
    }
    SUBCASE("nothing exchanged: all-gather's foreign chunks keep their absent marker") {
        auto c = prepare(collective_op::allgather, collective_algo::ring, 3, dtype::fp32, 3 * 4 * 5);
        CHECK(total_wrong(c) == 3 * 10);  // each rank misses the 2 other chunks of 5 elements
    }
    SUBCASE("incast: a byte flipped on the way is caught at the receiver") {
        auto c = prepare(collective_op::incast, collective_algo::direct, 3, dtype::fp32, 1000);
        simulate(c);
        c.recv[0][1500] ^= std::byte{1};
        CHECK(count_wrong_outputs(c.plans[0], c.send[0], c.recv[0]) == 1);
    }
}

TEST_CASE("plans: peers, ring links, buffers, refusals") {
    const auto ring = plan_collective(collective_op::allreduce, collective_algo::ring, 6, 2, dtype::fp32, 6 * 4 * 8);
    CHECK(data_peers(ring) == std::vector<unsigned>{1, 3});
    CHECK(ring.steps.size() == 10);
    CHECK(ring.times_link_from_left);
    CHECK(ring.in_place());
    const auto a2a = plan_collective(collective_op::alltoall, collective_algo::direct, 4, 1, dtype::fp32, 4 * 4 * 2);
    CHECK(data_peers(a2a) == std::vector<unsigned>{0, 2, 3});
    CHECK(a2a.recv_elements == 8);
    REQUIRE(a2a.self_copy);
    CHECK(a2a.self_copy->first == 2);
    CHECK_FALSE(a2a.times_link_from_left);
    CHECK_FALSE(plan_collective(collective_op::broadcast, collective_algo::ring, 4, 0, dtype::fp32, 64).times_link_from_left);
    CHECK(plan_collective(collective_op::broadcast, collective_algo::ring, 4, 3, dtype::fp32, 64).times_link_from_left);
    const auto receiver = plan_collective(collective_op::incast, collective_algo::direct, 5, 0, dtype::fp32, 10);
    CHECK(receiver.send_elements == 0);
    CHECK(receiver.recv_elements == 40);
    CHECK(data_peers(receiver) == std::vector<unsigned>{1, 2, 3, 4});
    CHECK_THROWS_AS(plan_collective(collective_op::alltoall, collective_algo::ring, 4, 0, dtype::fp32, 64), spec_error);
    CHECK_THROWS_AS(plan_collective(collective_op::allgather, collective_algo::ring, 6, 0, dtype::fp32, 64), spec_error);
    CHECK_THROWS_AS(plan_collective(collective_op::allreduce, collective_algo::ring, 1, 0, dtype::fp32, 64), spec_error);
    CHECK_THROWS_AS(plan_collective(collective_op::allreduce, collective_algo::ring, 4, 4, dtype::fp32, 64), spec_error);
}

}  // namespace collective_plan_test
