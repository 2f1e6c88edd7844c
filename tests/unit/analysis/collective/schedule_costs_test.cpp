// analysis/collective/schedule_costs: the α–β time of a measured schedule walked step by step, for the
// collectives `meshperf plan` has no formula for (incast, tree broadcast) and the chain
// broadcast (plan's formula leaves out its pipeline's fill).
#include "analysis/collective/schedule_costs.hpp"
#include "core/collective/plan.hpp"
#include "core/collective/result.hpp"
#include "core/error.hpp"
#include "core/collective/pipelined_schedule.hpp"

#include <doctest/doctest.h>
#include <limits>
#include <nlohmann/json.hpp>

namespace schedule_costs_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using doctest::Approx;

namespace {

const auto uniform = analysis::link_model::from_us_gbit(10, 8);  // α 10 µs, β 1 GB/s
constexpr double alpha = 10e-6, seconds_per_byte = 1e-9;
constexpr std::uint64_t piece = core::pipeline_piece_bytes;

analysis::schedule_cost incast(unsigned p, std::uint64_t s, const analysis::link_model& l = uniform) {
    return analysis::schedule_time(core::collective_op::incast, core::collective_algo::direct, p, core::dtype::fp32, s, l);
}
analysis::schedule_cost tree_broadcast(unsigned p, std::uint64_t s, const analysis::link_model& l = uniform) {
    return analysis::schedule_time(core::collective_op::broadcast, core::collective_algo::tree, p, core::dtype::fp32, s, l);
}
analysis::schedule_cost chain_broadcast(unsigned p, std::uint64_t s, const analysis::link_model& l = uniform) {
    return analysis::schedule_time(core::collective_op::broadcast, core::collective_algo::ring, p, core::dtype::fp32, s, l);
}

}  // namespace

TEST_CASE("schedule cost: incast is α + (p−1)S/β, the receiver's link, for p = 2..17") {
    for (unsigned p = 2; p <= 17; ++p) {
        CAPTURE(p);
        const std::uint64_t s = 1 << 20;
        const auto c = incast(p, s);
        CHECK(c.time_s == Approx(alpha + (p - 1) * double(s) * seconds_per_byte));
        CHECK(c.steps == 1);
        CHECK(c.message_bytes == double(s));
        CHECK(c.critical_rank == core::incast_receiver);
    }
}

TEST_CASE("schedule cost: a tree broadcast over two ranks streams S once: α + S/β") {
    for (std::uint64_t s : {std::uint64_t(4096), piece, 8 * piece, 8 * piece + 4096}) {
        CAPTURE(s);
        const auto c = tree_broadcast(2, s);
        CHECK(c.time_s == Approx(alpha + double(s) * seconds_per_byte));
        CHECK(c.steps == core::pipeline_pieces(s / 4, piece / 4));
        CHECK(c.message_bytes == double(std::min<std::uint64_t>(s, piece)));
        CHECK(c.critical_rank == 1);
    }
}

TEST_CASE("schedule cost: the root of a tree over three ranks sends every piece twice: α + 2S/β") {
    const auto c = tree_broadcast(3, 8 * piece);
    CHECK(c.time_s == Approx(alpha + 2 * 8.0 * piece * seconds_per_byte));
    CHECK(c.steps == 8);
}

TEST_CASE("schedule cost: over four ranks the deeper branch adds one piece of fill: 2S/β + m/β + 2α") {
    // The root sends each piece to ranks 1 and 2 together (2m/β for both); rank 1 passes it to
    // rank 3 a step later (m/β), so rank 3's last piece lands m/β + α after the others'.
    for (std::uint64_t pieces : {1u, 2u, 16u}) {
        CAPTURE(pieces);
        const auto c = tree_broadcast(4, pieces * piece);
        CHECK(c.time_s == Approx(2 * double(pieces * piece) * seconds_per_byte + double(piece) * seconds_per_byte + 2 * alpha));
        CHECK(c.critical_rank == 3);
    }
}

TEST_CASE("schedule cost: with latency alone a tree broadcast costs one α per level (⌊log2 p⌋)") {
    const analysis::link_model latency_only{alpha, std::numeric_limits<double>::infinity()};
    for (unsigned p = 2; p <= 17; ++p) {
        CAPTURE(p);
        CHECK(tree_broadcast(p, 4 * piece, latency_only).time_s == Approx(core::binary_tree_height(p) * alpha));
    }
}

TEST_CASE("schedule cost: a deeper tree adds pipeline fill, between the streaming bound and one step per piece") {
    for (unsigned p = 4; p <= 17; ++p) {
        for (std::uint64_t pieces : {1u, 2u, 16u}) {
            CAPTURE(p);
            CAPTURE(pieces);
            const double s = double(pieces * piece), m = double(piece);
            const unsigned h = core::binary_tree_height(p);
            const auto c = tree_broadcast(p, pieces * piece);
            // The root sends every piece to two children: 2S/β at least, and a landing.
            CHECK(c.time_s >= Approx(alpha + 2 * s * seconds_per_byte));
            // Never worse than every step waiting out two sends and a landing.
            CHECK(c.time_s <= Approx((pieces + h - 1) * (2 * m * seconds_per_byte + alpha)));
            CHECK(c.critical_rank != 0);
        }
    }
}

TEST_CASE("schedule cost: grows with the size and with a slower link") {
    const auto slow = analysis::link_model::from_us_gbit(10, 4);
    CHECK(tree_broadcast(6, 8 * piece).time_s > tree_broadcast(6, 4 * piece).time_s);
    CHECK(tree_broadcast(6, 8 * piece, slow).time_s > tree_broadcast(6, 8 * piece).time_s);
    CHECK(incast(6, 1 << 20, slow).time_s == Approx(2 * incast(6, 1 << 20).time_s - alpha));
}

TEST_CASE("schedule cost: each message over its own link") {
    const auto slow = [](double factor) { return analysis::link_model{alpha, 1e9 / factor}; };
    const std::uint64_t s = 1 << 20;
    const double wire = double(s) * seconds_per_byte;
    // Incast into rank 0 with sender 3's link ten times slower: its own S decides, not the
    // receiver's 3S (the others' bytes come in beside it).
    const auto slow_sender = [&](unsigned from, unsigned to) {
        CHECK(to == 0);  // only the pairs the schedule uses are asked for
        return from == 3 ? slow(10) : uniform;
    };
    CHECK(analysis::schedule_time(core::collective_op::incast, core::collective_algo::direct, 4, core::dtype::fp32, s,
                                  analysis::link_between(slow_sender))
              .time_s == Approx(alpha + 10 * wire));
    // Every link into the receiver at half the rate: its link takes 3S at β/2.
    const auto slow_receiver = [&](unsigned, unsigned) { return slow(2); };
    CHECK(analysis::schedule_time(core::collective_op::incast, core::collective_algo::direct, 4, core::dtype::fp32, s,
                                  analysis::link_between(slow_receiver))
              .time_s == Approx(alpha + 6 * wire));
    // A tree over three ranks whose root -> rank 2 link is four times slower: the root's link
    // carries both copies of a piece in 2m/β, but rank 2's takes 4m/β.
    const auto slow_edge = [&](unsigned from, unsigned to) { return from == 0 && to == 2 ? slow(4) : uniform; };
    const auto c = analysis::schedule_time(core::collective_op::broadcast, core::collective_algo::tree, 3, core::dtype::fp32,
                                           8 * piece, analysis::link_between(slow_edge));
    CHECK(c.time_s == Approx(alpha + 4 * 8.0 * piece * seconds_per_byte));
    CHECK(c.critical_rank == 2);
    // A bad link is refused when the schedule uses it.
    const auto bad = [&](unsigned from, unsigned) { return from == 2 ? analysis::link_model{alpha, 0} : uniform; };
    CHECK_THROWS_AS(analysis::schedule_time(core::collective_op::incast, core::collective_algo::direct, 4, core::dtype::fp32,
                                            s, analysis::link_between(bad)),
                    core::spec_error);
}

TEST_CASE("schedule cost: a chain broadcast of P pieces is (P + p − 2)m/β + (p − 1)α, for p = 2..17") {
    // The last rank gets piece c at (c + k)m/β + kα from the root (k hops, each a piece's
    // time and one α; a sender streams its pieces without waiting for them to land): plan's
    // (p − 1)α + S/β plus the pipeline's fill, p − 2 pieces.
    const double m = double(piece) * seconds_per_byte;
    for (unsigned p = 2; p <= 17; ++p) {
        for (std::uint64_t pieces : {1, 3, 16}) {
            CAPTURE(p);
            CAPTURE(pieces);
            const auto c = chain_broadcast(p, pieces * piece);
            CHECK(c.steps == pieces + p - 2);
            CHECK(c.time_s == Approx(double(pieces + p - 2) * m + (p - 1) * alpha));
            CHECK(c.message_bytes == double(piece));
            CHECK(c.critical_rank == p - 1);  // the chain's end
        }
    }
    // A last piece shorter than the others arrives that much sooner.
    const std::uint64_t short_piece = 4096;
    CHECK(chain_broadcast(4, 2 * piece + short_piece).time_s ==
          Approx(5 * m - double(piece - short_piece) * seconds_per_byte + 3 * alpha));
}

TEST_CASE("schedule cost: a chain broadcast with one slow link runs at that link's pace") {
    // Rank 2 -> rank 3 at a quarter of the rate: from rank 2 on, the pipeline moves one piece
    // every 4m/β; the other links keep up.
    const std::uint64_t pieces = 8;
    const auto slow_edge = [&](unsigned from, unsigned to) {
        CHECK(to == from + 1);  // a chain asks only for its own edges
        return from == 2 ? analysis::link_model{alpha, 0.25e9} : uniform;
    };
    const auto c = analysis::schedule_time(core::collective_op::broadcast, core::collective_algo::ring, 5, core::dtype::fp32,
                                           pieces * piece, analysis::link_between(slow_edge));
    const double m = double(piece) * seconds_per_byte, fast_hop = alpha + m;
    // Piece 0 reaches rank 2 in two fast hops; rank 2 sends a piece every 4m/β, the last one
    // lands α after; one fast hop more to the end.
    CHECK(c.time_s == Approx(2 * fast_hop + pieces * 4 * m + alpha + fast_hop));
    CHECK(c.critical_rank == 4);
    CHECK(c.time_s > chain_broadcast(5, pieces * piece).time_s);
}

TEST_CASE("schedule cost: which collectives it models, and bad input") {
    CHECK(analysis::schedule_modelled(core::collective_op::incast, core::collective_algo::direct));
    CHECK(analysis::schedule_modelled(core::collective_op::broadcast, core::collective_algo::tree));
    CHECK(analysis::schedule_modelled(core::collective_op::broadcast, core::collective_algo::ring));
    CHECK_FALSE(analysis::schedule_modelled(core::collective_op::allreduce, core::collective_algo::ring));
    CHECK_THROWS_AS(incast(1, 4096), core::spec_error);
    CHECK_THROWS_AS(tree_broadcast(4, 4097), core::spec_error);
    CHECK_THROWS_AS(incast(4, 4096, {-1e-6, 1e9}), core::spec_error);
    CHECK_THROWS_AS(incast(4, 4096, {1e-6, 0}), core::spec_error);
    const auto j = analysis::to_json(incast(3, 4096));
    CHECK(j["steps"] == 1);
    CHECK(j["time_s"].get<double>() == Approx(alpha + 2 * 4096 * seconds_per_byte));
}

}  // namespace schedule_costs_test
