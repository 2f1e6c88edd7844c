// core/collective/figures: op and algorithm names, which algorithm runs which op, the
// nccl-tests busbw factors for p = 2..17, algbw and its sanity check, Jain's fairness index.
#include "core/collective/figures.hpp"

#include "core/error.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <vector>

namespace collective_figures_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {
constexpr collective_op all_ops[] = {collective_op::allreduce, collective_op::allgather, collective_op::reduce_scatter,
                                     collective_op::alltoall,  collective_op::broadcast, collective_op::incast};
}

TEST_CASE("collective op and algorithm names: round trips, separators ignored, unknown names list the valid ones") {
    for (const auto op : all_ops) CHECK(parse_collective_op(to_string(op)) == op);
    for (const auto a : {collective_algo::ring, collective_algo::tree, collective_algo::direct})
        CHECK(parse_collective_algo(to_string(a)) == a);
    CHECK(to_string(collective_op::reduce_scatter) == "reduce-scatter");
    CHECK(parse_collective_op("all-reduce") == collective_op::allreduce);
    CHECK(parse_collective_op("reduce_scatter") == collective_op::reduce_scatter);
    CHECK(parse_collective_op("reducescatter") == collective_op::reduce_scatter);
    CHECK_THROWS_WITH_AS(parse_collective_op("allreduse"),
                         "unknown collective 'allreduse': use one of allreduce, allgather, reduce-scatter, alltoall, broadcast, incast",
                         spec_error);
    CHECK_THROWS_AS(parse_collective_op(""), spec_error);
    CHECK_THROWS_AS(parse_collective_op("--"), spec_error);
    CHECK_THROWS_WITH_AS(parse_collective_algo("mesh"), "unknown algorithm 'mesh': use one of ring, tree, direct", spec_error);
}

TEST_CASE("which algorithm runs which op: a refusal names the ones that can") {
    CHECK_THROWS_WITH_AS(require_can_run(collective_algo::tree, collective_op::alltoall), "--algo tree cannot run alltoall: use direct", spec_error);
    CHECK_THROWS_WITH_AS(require_can_run(collective_algo::direct, collective_op::allreduce), "--algo direct cannot run allreduce: use ring or tree", spec_error);
    CHECK_THROWS_WITH_AS(require_can_run(collective_algo::ring, collective_op::incast), "--algo ring cannot run incast: use direct", spec_error);
    CHECK_NOTHROW(require_can_run(collective_algo::ring, collective_op::reduce_scatter));
    for (const auto op : all_ops) CHECK(can_run(default_algo(op), op));  // every op runs with something
    CHECK(default_algo(collective_op::allreduce) == collective_algo::ring);
    CHECK(default_algo(collective_op::alltoall) == collective_algo::direct);
}

TEST_CASE("busbw factors as nccl-tests defines them, for p = 2..17") {
    for (unsigned p = 2; p <= 17; ++p) {
        const double n = p;
        CHECK(busbw_factor(collective_op::allreduce, p) == doctest::Approx(2 * (n - 1) / n));
        CHECK(busbw_factor(collective_op::allgather, p) == doctest::Approx((n - 1) / n));
        CHECK(busbw_factor(collective_op::reduce_scatter, p) == doctest::Approx((n - 1) / n));
        CHECK(busbw_factor(collective_op::alltoall, p) == doctest::Approx((n - 1) / n));
        CHECK(busbw_factor(collective_op::broadcast, p) == 1);
        CHECK(busbw_factor(collective_op::incast, p) == n - 1);
    }
    CHECK(busbw_factor(collective_op::allreduce, 8) == 1.75);
    CHECK(busbw_factor(collective_op::allreduce, 1) == 0);
    CHECK_THROWS_AS(busbw_factor(collective_op::allreduce, 0), spec_error);
}

TEST_CASE("algbw = S / t and busbw = algbw × factor; a time that is not finite and positive is insane") {
    CHECK(algbw_bytes_per_s(1 << 20, 1e-3) == doctest::Approx(1048576e3));
    CHECK(algbw_bytes_per_s(0, 1e-6) == 0);
    CHECK(busbw_bytes_per_s(collective_op::allreduce, 4, 4000, 1e-6) == doctest::Approx(6e9));
    for (const double t : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
        CHECK_THROWS_AS(algbw_bytes_per_s(1000, t), insane_figure);
}

TEST_CASE("Jain's fairness index: 1 for equal rates, 1/n for one sender taking all, sanity checks") {
    CHECK(jain_fairness(std::vector<double>{5, 5, 5, 5}) == doctest::Approx(1));
    CHECK(jain_fairness(std::vector<double>{8, 0, 0, 0}) == doctest::Approx(0.25));
    CHECK(jain_fairness(std::vector<double>{1, 2, 3}) == doctest::Approx(36.0 / 42.0));
    CHECK(jain_fairness(std::vector<double>{3e9}) == 1);
    CHECK_THROWS_AS(jain_fairness(std::vector<double>{}), spec_error);
    CHECK_THROWS_AS(jain_fairness(std::vector<double>{0, 0}), insane_figure);
    CHECK_THROWS_AS(jain_fairness(std::vector<double>{1, -1}), insane_figure);
    CHECK_THROWS_AS(jain_fairness(std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()}), insane_figure);
    CHECK_THROWS_AS(jain_fairness(std::vector<double>{1, std::numeric_limits<double>::infinity()}), insane_figure);
}

}  // namespace collective_figures_test
