// core/collective/pipelined_schedule: the binary tree's shape for p = 2..17 and every root, and the tree
// broadcast, tree all-reduce and chain broadcast simulated over in-memory buffers for every
// count from 0 to primes and pieces of several sizes: every rank ends with the root's buffer
// or the exact sums, every send meets a receive, no piece goes to the same peer twice.
#include "core/collective/pipelined_schedule.hpp"

#include "core/collective/figures.hpp"
#include "core/error.hpp"
#include "core/collective/reduce_ops.hpp"
#include "tests/unit/schedule_simulator.hpp"

#include <cmath>
#include <doctest/doctest.h>

namespace pipelined_schedule_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

constexpr std::size_t piece_sizes[] = {1, 2, 7, 1000};

unsigned ceil_log2(unsigned p) { return static_cast<unsigned>(std::ceil(std::log2(p))); }

}  // namespace

TEST_CASE("binary tree: one root, parents and children agree, height floor(log2 p) <= ceil(log2 p)") {
    for (unsigned p = 1; p <= 17; ++p)
        for (unsigned root = 0; root < p; ++root) {
            CAPTURE(p);
            CAPTURE(root);
            const unsigned h = binary_tree_height(p);
            CHECK(h == static_cast<unsigned>(std::floor(std::log2(p))));
            CHECK(h <= ceil_log2(p));
            unsigned roots = 0, edges = 0, deepest = 0;
            for (unsigned r = 0; r < p; ++r) {
                const auto me = binary_tree(p, r, root);
                CHECK(me.children.size() <= 2);
                edges += static_cast<unsigned>(me.children.size());
                deepest = std::max(deepest, me.depth);
                for (unsigned c : me.children) {
                    const auto child = binary_tree(p, c, root);
                    CHECK(child.parent == r);
                    CHECK(child.depth == me.depth + 1);
                }
                if (!me.parent) {
                    ++roots;
                    CHECK(r == root);
                    CHECK(me.depth == 0);
                    continue;
                }
                const auto parent = binary_tree(p, *me.parent, root);
                CHECK(std::count(parent.children.begin(), parent.children.end(), r) == 1);
                // Walking up reaches the root in depth steps.
                unsigned at = r, steps = 0;
                while (binary_tree(p, at, root).parent) at = *binary_tree(p, at, root).parent, ++steps;
                CHECK(at == root);
                CHECK(steps == me.depth);
            }
            CHECK(roots == 1);
            CHECK(edges == p - 1);
            CHECK(deepest == h);
        }
    CHECK_THROWS_AS(binary_tree(4, 4), spec_error);
    CHECK_THROWS_AS(binary_tree(4, 0, 4), spec_error);
    CHECK_THROWS_AS(binary_tree_height(0), spec_error);
}

TEST_CASE("pipeline pieces: cover the buffer in order, the last one short") {
    CHECK(pipeline_pieces(0, 4) == 0);
    CHECK(pipeline_pieces(1, 4) == 1);
    CHECK(pipeline_pieces(8, 4) == 2);
    CHECK(pipeline_pieces(9, 4) == 3);
    CHECK(pipeline_piece(9, 4, 2) == element_range{8, 1});
    CHECK_THROWS_AS(pipeline_pieces(9, 0), spec_error);
    CHECK_THROWS_AS(pipeline_piece(9, 4, 3), spec_error);
}

TEST_CASE("tree and chain broadcast: every rank ends with the root's buffer, from every root") {
    for (unsigned p = 2; p <= 17; ++p)
        for (const unsigned root : {0u, p / 2, p - 1})
            for (const std::size_t n : schedule_sim::counts(p))
                for (const std::size_t piece : piece_sizes)
                    for (const bool tree : {true, false}) {
                        CAPTURE(p);
                        CAPTURE(root);
                        CAPTURE(n);
                        CAPTURE(piece);
                        CAPTURE(tree);
                        auto bufs = schedule_sim::filled(p, n, [&](unsigned r, std::size_t) { return r == root; });
                        std::vector<rank_schedule> plans;
                        const std::size_t pieces = pipeline_pieces(n, piece);
                        const std::size_t steps = pieces == 0 ? 0 : pieces + (tree ? binary_tree_height(p) : p - 1) - 1;
                        for (unsigned r = 0; r < p; ++r) {
                            plans.push_back(tree ? tree_broadcast_steps(p, r, root, n, piece) : chain_broadcast_steps(p, r, root, n, piece));
                            REQUIRE(plans.back().size() == steps);
                        }
                        const auto seen = schedule_sim::run(dtype::fp32, plans, bufs, bufs);
                        CHECK_FALSE(seen.repeated_send);
                        std::vector<double> want(n);
                        for (std::size_t i = 0; i < n; ++i) want[i] = test_value(root, i);
                        std::size_t most = 0;
                        for (unsigned r = 0; r < p; ++r) {
                            CHECK(count_wrong(dtype::fp32, bufs[r], want, 0) == 0);
                            most = std::max(most, seen.sent_elements[r]);
                        }
                        // busbw factor 1: the busiest link of the chain carries S once (a tree node, twice).
                        CHECK(most == (tree && p > 2 ? 2 : 1) * busbw_factor(collective_op::broadcast, p) * n);
                    }
}

TEST_CASE("tree all-reduce: pieces + 2H - 1 steps, every rank ends with the exact sums in every dtype") {
    for (const auto type : {dtype::fp32, dtype::bf16, dtype::fp16})
        for (unsigned p = 2; p <= 17; ++p)
            for (const std::size_t n : schedule_sim::counts(p))
                for (const std::size_t piece : piece_sizes) {
                    CAPTURE(p);
                    CAPTURE(n);
                    CAPTURE(piece);
                    std::vector<schedule_sim::buffer> bufs(p, schedule_sim::buffer(n * dtype_bytes(type)));
                    std::vector<rank_schedule> plans;
                    const std::size_t pieces = pipeline_pieces(n, piece);
                    for (unsigned r = 0; r < p; ++r) {
                        fill_test_values(type, r, bufs[r]);
                        plans.push_back(tree_allreduce_steps(p, r, n, piece));
                        REQUIRE(plans.back().size() == (pieces ? pieces + 2 * binary_tree_height(p) - 1 : 0));
                    }
                    const auto seen = schedule_sim::run(type, plans, bufs, bufs);
                    CHECK_FALSE(seen.repeated_send);
                    for (unsigned r = 0; r < p; ++r) CHECK(count_wrong_sums(type, p, bufs[r]) == 0);
                    // Up once, down to each child: a rank sends S × (1 + children), the root S × children.
                    for (unsigned r = 0; r < p; ++r) {
                        const auto me = binary_tree(p, r);
                        CHECK(seen.sent_elements[r] == n * (me.children.size() + (me.parent ? 1 : 0)));
                    }
                }
    CHECK(tree_allreduce_steps(1, 0, 10, 4).empty());
    CHECK_THROWS_AS(tree_allreduce_steps(4, 0, 10, 0), spec_error);
    CHECK_THROWS_AS(chain_broadcast_steps(4, 0, 4, 10, 1), spec_error);
}

}  // namespace pipelined_schedule_test
