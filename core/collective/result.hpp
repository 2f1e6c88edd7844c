#pragma once
/// The result side of a measured collective: what each
/// rank's timing of one op at one size becomes, as nccl-tests reports it (time, algbw, busbw,
/// #wrong), with what nccl-tests does not report (the spread over ranks, the slowest rank,
/// the slowest ring link, incast fairness); and a whole run as values, as JSON (schema
/// "meshperf.collective/1", docs/result-schema.md, "Collective results") and as CSV. Every
/// point passes check_sane() before it is reported. Pure: no I/O, no rendering (the text
/// table is the client's). Times are seconds, sizes bytes; GB/s are 10^9 byte/s and Gbit/s
/// 10^9 bit/s.
#include "core/collective/figures.hpp"
#include "core/collective/spec.hpp"
#include "core/link_counters.hpp"
#include "core/point_counters.hpp"
#include "core/collective/dtype.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Version tag of the collective result JSON.
inline constexpr const char* collective_result_schema = "meshperf.collective/1";

/// The rank that receives an incast; every other rank sends to it.
inline constexpr unsigned incast_receiver = 0;

/// One link of a ring: rank `from` sends to its right neighbour `to`, which times it (the
/// daemon: from the first to the last byte of each step's message over it; a sender's own
/// clock stops once a chunk is in its socket buffer). The field keeps its name, send_s.
struct collective_link {
    unsigned from = 0;        ///< the sending rank
    unsigned to = 0;          ///< its right neighbour, (from + 1) mod p
    std::uint64_t bytes = 0;  ///< what `from` sends to `to` in one iteration (ring_link_bytes)
    double send_s = 0;        ///< the link's transfer time per iteration, the mean over iterations
    double gbit_per_s = 0;    ///< bytes × 8 / send_s / 10^9: the link's rate while it carries data
    /// TCP meshes: what `from`'s socket to `to` counted over the size's timed iterations
    /// (its rank_tcp_counters entry); empty over RDMA, where `from` could not read it, and in
    /// older results. Retransmitted segments, and segments sent with them included.
    std::optional<std::uint64_t> retransmits;
    std::optional<std::uint64_t> segments_sent;
    bool operator==(const collective_link&) const = default;
};

/// "rank 2 -> rank 3".
std::string to_string(const collective_link&);

/// The spread over ranks of each rank's mean time per iteration.
struct rank_spread {
    double min_s = 0;
    double max_s = 0;
    double max_over_min = 0;  ///< max_s / min_s, 1 when every rank took as long
};

/// An incast's figures: every rank but incast_receiver sent S to it in each iteration.
struct incast_figures {
    /// Goodput of each sender, S / its mean time per iteration, in Gbit/s; entry i is the
    /// i-th sender in rank order (rank i + 1, as the receiver is rank 0).
    /// (The daemon passes, as each sender's iteration times, the receiver's timing of when
    /// that sender's last byte arrived: see daemon/collective/engine.hpp.)
    std::vector<double> sender_gbit_per_s;
    double total_gbit_per_s = 0;  ///< (p−1)·S / the receiver's mean time per iteration, Gbit/s
    double fairness = 0;          ///< Jain's index of sender_gbit_per_s: 1/(p−1)..1, 1 when all are equal
};

/// One op at one size, as reported. `time_s` is nccl-tests' time: for each iteration the
/// slowest rank's time (the maximum over ranks: an iteration is done when every rank is),
/// then the mean over iterations; algbw = S / time_s and busbw = algbw × busbw_factor.
/// The maximum of the ranks' mean times, spread.max_s, is never above it and is lower
/// whenever the slowest rank changes from one iteration to the next.
struct collective_point {
    collective_op op = collective_op::allreduce;
    collective_algo algo = collective_algo::ring;
    unsigned ranks = 0;            ///< p
    dtype element = dtype::fp32;   ///< what the buffers hold (and the reductions sum)
    std::uint64_t size_bytes = 0;  ///< S, the nccl-tests size (core/collective/figures.hpp)
    std::uint64_t count = 0;       ///< elements: S / dtype_bytes (rounded down for incast, which moves bytes)
    std::uint64_t iterations = 0;  ///< measured iterations (warm-up excluded), the same on every rank

    double time_s = 0;             ///< mean over iterations of the per-iteration maximum over ranks
    double time_min_s = 0;         ///< fastest iteration (its slowest rank)
    double time_p50_s = 0;         ///< median iteration (core::percentile_sorted)
    double time_max_s = 0;         ///< slowest iteration
    double algbw_gbyte_per_s = 0;  ///< S / time_s / 10^9
    double busbw_gbyte_per_s = 0;  ///< algbw × busbw_factor(op, ranks)
    double algbw_gbit_per_s = 0;   ///< 8 × algbw_gbyte_per_s
    double busbw_gbit_per_s = 0;   ///< 8 × busbw_gbyte_per_s

    std::vector<double> rank_time_s;  ///< each rank's mean time per iteration, index = rank
    rank_spread spread;               ///< of rank_time_s
    unsigned slowest_rank = 0;        ///< the rank with the largest rank_time_s (the lowest on a tie)

    /// Ring algorithms: each rank's link to its right neighbour, in rank order (p links; a
    /// chain broadcast, rooted at rank 0, has p−1: rank p−1 sends nothing). Otherwise empty,
    /// and empty too for a ring whose links were not timed at this size: a receiver whose
    /// messages each came in one piece timed nothing (small sizes), and a rate from that
    /// would be the clock's resolution, not the link's.
    std::vector<collective_link> links;
    /// The link of `links` with the largest send_s (the lowest rank on a tie); empty when
    /// links is.
    std::optional<collective_link> slowest_link;

    /// #wrong: wrong elements summed over ranks; empty when the run did not verify.
    std::optional<std::uint64_t> wrong;
    /// Present for incast only.
    std::optional<incast_figures> incast;
    /// Each rank's NIC counters over the size's timed iterations, index = rank (empty where a
    /// rank could not read them, or none at all in older results; docs/counters.md).
    std::vector<std::optional<link_side_counters>> rank_counters;
    /// TCP meshes: what the sockets each rank sends data on counted over the size's timed
    /// iterations (TCP_INFO read before the first and after the last), index = rank. Ring
    /// algorithms: the one socket to the right neighbour, so entry r is exactly the link
    /// r -> r+1 mod p; other algorithms: summed over every peer the rank sends data to. An
    /// entry is empty where the rank could not read its sockets or sends no data (the last
    /// rank of a chain broadcast, an incast's receiver); the vector is empty when no rank has
    /// an entry: over RDMA, and in older results (docs/counters.md). Barrier tokens over the
    /// same sockets are counted too.
    std::vector<std::optional<tcp_point_counters>> rank_tcp_counters;
};

/// "sum" for the ops that reduce (allreduce, reduce-scatter), "none" otherwise: nccl-tests'
/// redop column.
std::string_view redop_name(collective_op);

/// Bytes rank `rank` sends to its right neighbour, rank + 1 mod p, in one iteration of `op`
/// on a ring of `ranks` ranks over a size of `size_bytes` (a multiple of size_step): the
/// chunks of its ring_allreduce_steps, ring_reduce_scatter_steps or ring_allgather_steps;
/// for broadcast, the chain rooted at rank 0, S for every rank but the last and 0 for it.
/// Throws spec_error for fewer than 2 ranks, a rank outside them, or an op a ring cannot run.
std::uint64_t ring_link_bytes(collective_op op, unsigned ranks, dtype element, std::uint64_t size_bytes, unsigned rank);

/// Turns what every rank measured of one op at one size into the reported point, then
/// checks it (check_sane). Inputs, index = rank:
/// - per_rank_iteration_s: each rank's time of every measured iteration, seconds; `ranks`
///   vectors of one common length ≥ 1, every time finite and > 0.
/// - per_rank_send_s: ring algorithms only (empty otherwise): for each rank r, the transfer
///   time of its link to its right neighbour in every iteration, seconds, finite, > 0 and at
///   most that neighbour's time of the iteration (the neighbour times it); `ranks` vectors of
///   the iteration count, except that of rank p−1 for a chain broadcast, which must be empty;
///   or no vectors at all when the links were not timed (the point then has no links).
/// - wrong_elements_per_rank: each rank's wrong elements (`ranks` counts), or empty when the
///   run did not verify (the point's `wrong` is then empty).
/// Throws insane_figure naming the first input that breaks these rules (also for fewer than
/// 2 ranks, an algorithm that cannot run the op, or a size that is 0 or not a multiple of
/// size_step(op, ranks, element)).
collective_point assemble_collective_point(collective_op op, collective_algo algo, unsigned ranks, dtype element,
                                           std::uint64_t size_bytes,
                                           std::span<const std::vector<double>> per_rank_iteration_s,
                                           std::span<const std::vector<double>> per_rank_send_s,
                                           std::span<const std::uint64_t> wrong_elements_per_rank);

/// Throws insane_figure unless the point holds together: at least 2 ranks and an algorithm
/// that runs the op, a size that is a multiple of size_step, count = S / element size, at
/// least one iteration, times finite and > 0 with min ≤ p50 ≤ max and min ≤ time ≤ max,
/// algbw = S / time, busbw = algbw × busbw_factor, Gbit/s = 8 × GB/s, one positive rank time
/// per rank whose spread, slowest rank and maximum (≤ time) agree with them, links only for
/// ring algorithms (all of them, or none when not timed) with rates that agree with bytes and send times and the slowest link
/// the one with the largest send time, and incast figures exactly for incast, one rate per
/// sender, finite and positive, with the fairness Jain's index of them.
void check_sane(const collective_point&);

/// Gives each of the point's links (and its slowest link) the retransmits and segments sent of
/// its sender's rank_tcp_counters entry; links whose sender has none are left without. Call
/// once the point's rank_tcp_counters are in.
void attach_link_tcp_counts(collective_point&);

/// A whole collective run as stored and returned.
struct collective_result : run_header {
    collective_spec spec;     ///< what was asked, validated
    /// Each rank's daemon as it described itself, index = rank; empty until the run started.
    std::vector<host_info> hosts;
    /// Points in the order measured: for each op of spec.ops, each size of spec.sizes.
    std::vector<collective_point> points;
    /// A failed run: the rank the failure is put on (its daemon unreachable, killed, frozen,
    /// or its link cut), when one could be named.
    std::optional<unsigned> failed_rank;
    /// A failed run that measured nothing because a rank could not join it (unreachable,
    /// refused the plan): `meshperf collective` exits 3 for it, as for an unreachable daemon.
    bool failed_at_start = false;
};

/// A link as JSON: {name ("rank a -> rank b"), from, to, bytes, send_s, gbit_per_s[, retransmits,
/// segments_sent]} (the last two only when known).
nlohmann::json to_json(const collective_link&);
/// A point as JSON (docs/result-schema.md, "Collective points"); `wrong`, `slowest_link` and
/// `incast` are null where they do not apply.
nlohmann::json to_json(const collective_point&);
/// The run's document, tagged with collective_result_schema; finished_at and error are null
/// while empty.
nlohmann::json to_json(const collective_result&);
/// Reads a point as to_json writes it; throws spec_error for a missing or mistyped field
/// and insane_figure when the point read fails check_sane.
collective_point collective_point_from_json(const nlohmann::json&);
/// Reads a collective result document; throws spec_error when the schema tag is missing or
/// not collective_result_schema, or for a malformed field, and insane_figure for a point
/// that fails check_sane. The spec is validated as collective_spec_from_json does, with its
/// hosts taken as stored (they were normalized when the run was accepted) and under no
/// daemon's limits (a run that ran is not refused for the limits of the one reading it).
collective_result collective_result_from_json(const nlohmann::json&);

/// CSV header: nccl-tests' columns first (size, count, type, redop, time_us,
/// algbw_gbyte_per_s, busbw_gbyte_per_s, wrong), then the rest (docs/result-schema.md).
std::string collective_csv_header();
/// One CSV row of `point` of run `r`, the columns of collective_csv_header; numbers with 6
/// significant digits, empty cells for what does not apply or was not measured.
std::string to_csv_row(const collective_result& r, const collective_point& point);

}  // namespace meshperf::core
