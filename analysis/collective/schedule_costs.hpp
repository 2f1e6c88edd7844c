#pragma once
/// Predicted time of a measured collective's own schedule (core::plan_collective) under the
/// α–β link model, for the measured collectives `meshperf plan` has no formula for, incast
/// (p−1 senders into one receiver) and the pipelined binary-tree broadcast, and for the
/// chain broadcast, whose pieces plan takes as infinitely fine. The schedule is walked step
/// by step on every rank, as the data path runs it:
///  - a rank starts step s when its step s−1 is done: its sends have left and its receives
///    have landed;
///  - a rank's sends of one step leave together and share its link: done when it has
///    carried their sum at the β of the fastest link out of it, each no sooner than its own
///    link carries it (as TCP flows, or queue pairs, share a NIC);
///  - a message lands α after its last byte left, and a rank's receives of one step share
///    its inbound link: they land no faster than their bytes fit through it, at the β of the
///    fastest link into it (so a slow sender trickles in beside the others);
///  - links are full duplex; no other contention (a non-blocking fabric).
/// So incast costs α + (p−1)S/β (the receiver's link), a tree broadcast of P pieces over a
/// tree of height H about (P + H − 1) steps, each an inner rank's two sends of a piece
/// (2m/β), and a chain broadcast (P + p − 2)m/β + (p − 1)α: plan's (p−1)α + S/β plus the
/// pipeline's fill, p−2 pieces.
/// Reduction arithmetic and per-message software costs beyond α are not modelled.
#include "analysis/collective/predictions.hpp"
#include "core/collective/ops.hpp"
#include "core/collective/dtype.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>

namespace meshperf::analysis {

/// The predicted time of one schedule and what it is made of.
struct schedule_cost {
    double time_s = 0;          ///< until the last rank finishes its last step
    std::uint64_t steps = 0;    ///< steps of the schedule (the same on every rank)
    double message_bytes = 0;   ///< the largest message of the schedule (which fit segment applies)
    unsigned critical_rank = 0; ///< the rank that finishes last (the lowest on a tie)
};

/// Whether the client predicts (op, algo) by walking its schedule (a schedule_walk in its
/// entry of core/collective/ops.hpp): incast and broadcast (tree and chain).
bool schedule_modelled(core::collective_op, core::collective_algo);

/// The largest message of the schedule of (op, algo) on S = size_bytes: S where its walk is
/// not pipelined (incast), min(S, core::pipeline_piece_bytes) for a pipelined tree or chain.
double schedule_message_bytes(core::collective_op, core::collective_algo, std::uint64_t size_bytes);

/// The link a message from rank `from` to rank `to` crosses.
using link_between = std::function<link_model(unsigned from, unsigned to)>;

/// Walks the schedule of every rank (core::plan_collective with `element`), each message over
/// its own link, `links(from, to)` (asked once per pair the schedule uses). Throws
/// core::spec_error as plan_collective does (fewer than 2 ranks, a size not a multiple of the
/// step) and for a link with α < 0 or β <= 0; what `links` throws passes through.
schedule_cost schedule_time(core::collective_op, core::collective_algo, unsigned ranks, core::dtype element,
                            std::uint64_t size_bytes, const link_between& links);
/// The same over links that all follow `link`.
schedule_cost schedule_time(core::collective_op, core::collective_algo, unsigned ranks, core::dtype element,
                            std::uint64_t size_bytes, const link_model& link);

/// {"time_s", "steps", "message_bytes", "critical_rank"}.
nlohmann::json to_json(const schedule_cost&);

}  // namespace meshperf::analysis
