#pragma once
// A test-only simulator of collective schedules: runs every rank's steps over in-memory
// buffers, all sends of a step before any receive, as on the wire, and checks on the way
// that each send meets the peer's receive of the same step and size, that nothing is left
// unreceived, and that a step never reads what it writes. Used by the schedule tests.
#include "core/collective/schedule.hpp"
#include "analysis/collective/predictions.hpp"
#include "core/collective/reduce_ops.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <doctest/doctest.h>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

namespace schedule_sim {

using meshperf::core::dtype;
using meshperf::core::element_range;
using meshperf::core::rank_schedule;
using buffer = std::vector<std::byte>;

/// What the run saw: elements each rank sent, and whether any rank sent the same range to
/// the same peer twice (empty messages, which chunks of a buffer shorter than p give, aside).
struct stats {
    std::vector<std::size_t> sent_elements;
    bool repeated_send = false;
};

inline bool overlap(const element_range& a, const element_range& b) {
    return a.count && b.count && a.first < b.first + b.count && b.first < a.first + a.count;
}

/// Runs plans[r] for every rank r. Sends read send[r], receives write recv[r]; pass the same
/// vector twice for an in-place schedule.
inline stats run(dtype type, const std::vector<rank_schedule>& plans, const std::vector<buffer>& send,
                 std::vector<buffer>& recv) {
    const std::size_t p = plans.size(), w = meshperf::core::dtype_bytes(type);
    const bool in_place = &send == &recv;
    stats out{std::vector<std::size_t>(p), false};
    std::vector<std::set<std::tuple<unsigned, std::size_t, std::size_t>>> sent(p);
    for (const auto& plan : plans) REQUIRE(plan.size() == plans[0].size());
    for (std::size_t s = 0; s < plans[0].size(); ++s) {
        std::map<std::pair<unsigned, unsigned>, std::deque<buffer>> wire;
        for (unsigned r = 0; r < p; ++r)
            for (const auto& t : plans[r][s].sends) {
                REQUIRE(t.peer < p);
                CHECK(t.peer != r);
                REQUIRE((t.range.first + t.range.count) * w <= send[r].size());
                const auto from = send[r].begin() + static_cast<std::ptrdiff_t>(t.range.first * w);
                auto& queue = wire[{r, t.peer}];
                CHECK_MESSAGE(queue.empty(), "rank ", r, " sends rank ", t.peer, " two messages at step ", s);
                queue.emplace_back(from, from + static_cast<std::ptrdiff_t>(t.range.count * w));
                out.sent_elements[r] += t.range.count;
                if (t.range.count && !sent[r].insert({t.peer, t.range.first, t.range.count}).second) out.repeated_send = true;
            }
        for (unsigned r = 0; r < p; ++r) {
            const auto& step = plans[r][s];
            for (std::size_t i = 0; i < step.recvs.size(); ++i) {
                const auto& t = step.recvs[i];
                if (in_place)
                    for (const auto& x : step.sends) CHECK_FALSE(overlap(x.range, t.range));
                for (std::size_t j = 0; j < i; ++j)
                    if (!t.reduce || !step.recvs[j].reduce) CHECK_FALSE(overlap(step.recvs[j].range, t.range));
                auto& queue = wire[{t.peer, r}];
                REQUIRE_MESSAGE(!queue.empty(), "rank ", r, " waits at step ", s, " for rank ", t.peer, ", who sends nothing");
                const buffer msg = std::move(queue.front());
                queue.pop_front();
                REQUIRE(msg.size() == t.range.count * w);
                REQUIRE((t.range.first + t.range.count) * w <= recv[r].size());
                const std::span<std::byte> dst(recv[r].data() + t.range.first * w, msg.size());
                if (t.reduce) meshperf::core::reduce_sum(type, dst, msg);
                else std::copy(msg.begin(), msg.end(), dst.begin());
            }
        }
        // Not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE's lambda.
        for (const auto& entry : wire) {
            const auto& link = entry.first;
            CHECK_MESSAGE(entry.second.empty(), "step ", s, ": rank ", link.first, " sent to rank ", link.second,
                          ", who did not receive it");
        }
    }
    return out;
}

/// A ring schedule (chunk indices) as a rank_schedule: send to the right, receive from the left.
inline rank_schedule from_ring(const std::vector<meshperf::core::ring_step>& steps, std::size_t elements, unsigned p, unsigned rank) {
    rank_schedule plan;
    for (const auto& s : steps)
        plan.push_back({{{(rank + 1) % p, meshperf::core::ring_chunk(elements, p, s.send_chunk), false}},
                        {{(rank + p - 1) % p, meshperf::core::ring_chunk(elements, p, s.recv_chunk), s.reduce}}});
    return plan;
}

/// Element counts that catch off-by-one chunking: 0, 1, p−1, p, p+1, primes, 3p+2.
inline std::vector<std::size_t> counts(unsigned p) {
    std::vector<std::size_t> n{0, 1, p - 1, p, p + 1, 31, 97, 3 * p + 2};
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    return n;
}

/// Buffers of `elements` fp32 elements: rank r's test values where own(r, i), else -1.
template <class Own> std::vector<buffer> filled(unsigned p, std::size_t elements, Own own) {
    std::vector<buffer> bufs(p, buffer(elements * 4));
    for (unsigned r = 0; r < p; ++r) {
        meshperf::core::fill_test_values(dtype::fp32, r, bufs[r]);
        for (std::size_t i = 0; i < elements; ++i)
            if (!own(r, i)) {
                const float none = -1;
                std::memcpy(bufs[r].data() + i * 4, &none, 4);
            }
    }
    return bufs;
}

}  // namespace schedule_sim
