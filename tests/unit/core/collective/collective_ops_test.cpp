// core/collective/ops: the op table holds together: entry i is op i, every op fills what
// every layer asks of it, and what it says of rings, plan's formulas and predictions agrees
// with its own algorithms.
#include "core/collective/ops.hpp"

#include "core/collective/figures.hpp"
#include "core/collective/plan.hpp"

#include <algorithm>
#include <doctest/doctest.h>

namespace collective_ops_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

bool has(std::span<const collective_algo> algos, collective_algo a) { return std::ranges::find(algos, a) != algos.end(); }

}  // namespace

TEST_SUITE("collective ops") {

TEST_CASE("the table is in enum order and every entry is filled") {
    const auto ops = collective_ops();
    REQUIRE(ops.size() == 6);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto& t = ops[i];
        CAPTURE(t.name);
        CHECK(static_cast<std::size_t>(t.op) == i);
        CHECK(&op_traits(t.op) == &t);
        CHECK(!t.name.empty());
        CHECK(!t.algos.empty());
        CHECK((t.busbw_factor != nullptr));
        CHECK((t.build != nullptr));
        CHECK((t.fill_inputs != nullptr));
        CHECK((t.count_wrong != nullptr));
        CHECK((t.busiest_rank_bytes != nullptr));
        CHECK((t.ring_link_bytes != nullptr) == has(t.algos, collective_algo::ring));
        CHECK(t.model_algos.empty() == t.model_name.empty());
        CHECK(t.model_algos.empty() == (t.flat_cost == nullptr));
        CHECK(!(t.ring_is_chain && !has(t.algos, collective_algo::ring)));
        CHECK(!(t.moves_bytes && t.per_rank_blocks));
    }
}

TEST_CASE("each prediction names an algorithm of its op and a formula plan has") {
    for (const auto& t : collective_ops())
        for (const auto& p : t.predictions) {
            CAPTURE(t.name);
            CHECK(has(t.algos, p.algo));
            CHECK((p.formula || p.walk));
            CHECK(prediction_of(t.op, p.algo) == &p);
            if (p.formula) {
                const auto algos = op_traits(p.formula->op).model_algos;
                CHECK(std::ranges::find(algos, p.formula->algo) != algos.end());
            }
        }
    CHECK(prediction_of(collective_op::incast, collective_algo::ring) == nullptr);
}

TEST_CASE("every op's plan runs on every rank of every algorithm") {
    for (const auto& t : collective_ops())
        for (auto algo : t.algos)
            for (unsigned r = 0; r < 4; ++r) {
                CAPTURE(t.name);
                const auto plan = plan_collective(t.op, algo, 4, r, dtype::fp32, 4096);
                CHECK(plan.op == t.op);
                CHECK(plan.element_bytes == (t.moves_bytes ? 1u : 4u));
                CHECK_FALSE(plan.steps.empty());
            }
}

TEST_CASE("the flat α–β terms of the ring grow with the ranks") {
    for (const auto& t : collective_ops()) {
        if (!t.flat_cost) continue;
        CAPTURE(t.name);
        const auto two = t.flat_cost(t.model_algos.front(), 1e6, 2), eight = t.flat_cost(t.model_algos.front(), 1e6, 8);
        CHECK(two.latency_terms > 0);
        CHECK(eight.latency_terms >= two.latency_terms);
        CHECK(eight.bandwidth_bytes >= two.bandwidth_bytes);
    }
    CHECK(to_string(model_algo::recursive_halving) == "recursive_halving");
}

}  // TEST_SUITE

}  // namespace collective_ops_test
