// Incast: every rank but core::incast_receiver (0) sends S bytes to it at once, into a block
// of its receive buffer per sender. Direct only; it moves bytes, each sender's pattern
// (core::incast_byte) telling a byte from the wrong sender or place.
#include "core/collective/ops.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/collective/plan.hpp"
#include "core/collective/result.hpp"

#include <algorithm>

namespace meshperf::core::ops::incast {
namespace {

// Every sender's S bytes into the receiver's block for it, all in one step.
void build(collective_plan& plan, std::size_t bytes, std::size_t) {
    plan.steps.assign(1, {});
    if (plan.rank == incast_receiver) {
        plan.send_elements = 0;
        plan.recv_elements = bytes * (plan.ranks - 1);
        for (unsigned q = 0; q < plan.ranks; ++q)
            if (q != incast_receiver) plan.steps[0].recvs.push_back({q, {(q - 1) * bytes, bytes}, false});
    } else {
        plan.steps[0].sends.push_back({incast_receiver, {0, bytes}, false});
    }
}

void fill(const collective_plan& plan, std::span<std::byte> send, std::span<std::byte> recv) noexcept {
    for (std::size_t i = 0; i < plan.send_elements; ++i) send[i] = incast_byte(plan.rank, i);
    std::fill(recv.begin(), recv.end(), std::byte{0xff});
}

// Every byte of every sender, on the receiver; senders have nothing to check.
std::uint64_t count_wrong(const collective_plan& plan, std::span<const std::byte>, std::span<const std::byte> recv) {
    if (plan.rank != incast_receiver) return 0;
    std::uint64_t wrong = 0;
    const std::size_t s = plan.recv_elements / (plan.ranks - 1);
    for (unsigned q = 1; q < plan.ranks; ++q)
        for (std::size_t i = 0; i < s; ++i) wrong += recv[(q - 1) * s + i] != incast_byte(q, i);
    return wrong;
}

std::uint64_t busiest_rank_bytes(collective_algo, unsigned ranks, dtype, std::uint64_t size) {
    return ops::mul_sat(std::uint64_t{ranks} - 1, size);  // the receiver's
}

constexpr collective_algo algos[] = {collective_algo::direct};
constexpr measured_prediction predictions[] = {
    {collective_algo::direct, std::nullopt,
     schedule_walk{"p-1 senders share the receiver's link, alpha + (p-1)S/beta", "meshperf plan has no incast", false}},
};

constexpr collective_op_traits traits{
    .op = collective_op::incast,
    .name = "incast",
    .algos = algos,
    .moves_bytes = true,
    .busbw_factor = [](double p) { return p - 1; },
    .build = build,
    .fill_inputs = fill,
    .count_wrong = count_wrong,
    .busiest_rank_bytes = busiest_rank_bytes,
    .predictions = predictions,
};

}  // namespace
}  // namespace meshperf::core::ops::incast

namespace meshperf::core {

std::byte incast_byte(unsigned sender, std::size_t index) noexcept {
    return static_cast<std::byte>((sender * 37u + index * 11u + 1u) & 0xffu);
}

extern const collective_op_traits incast_op = ops::incast::traits;

}  // namespace meshperf::core
