#include "core/collective/result.hpp"

#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace meshperf::core {
namespace {

constexpr double tolerance = 1e-9;  // relative: the figures are recomputed from what they derive from

bool agrees(double a, double b) { return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b)) + 1e-300; }

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

bool is_chain(const collective_point& p) { return p.algo == collective_algo::ring && op_traits(p.op).ring_is_chain; }

std::string what_point(collective_op op, unsigned ranks, std::uint64_t size) {
    return fmt::format("{} of {} bytes over {} ranks", to_string(op), size, ranks);
}
std::string what_point(const collective_point& p) { return what_point(p.op, p.ranks, p.size_bytes); }

// The first rules of every point, for the inputs and for a point read back alike.
void check_shape(collective_op op, collective_algo algo, unsigned ranks, dtype element, std::uint64_t size) {
    if (const auto why = collective_shape_problem(op, algo, ranks, element, size); !why.empty())
        throw insane_figure(fmt::format("{}: {}", what_point(op, ranks, size), why));
}

// Every rank's series of times: `ranks` series of `length` finite, positive times each
// (`length` 0 for a rank that times nothing: the last of a chain).
void check_series(std::string_view what, const collective_point& p, std::span<const std::vector<double>> series,
                  std::uint64_t length, bool chain_end_empty) {
    if (series.size() != p.ranks)
        throw insane_figure(fmt::format("{}: {} of {} ranks, not {}", what_point(p), what, series.size(), p.ranks));
    for (unsigned r = 0; r < p.ranks; ++r) {
        const auto expected = chain_end_empty && r + 1 == p.ranks ? 0 : length;
        if (series[r].size() != expected)
            throw insane_figure(fmt::format("{}: rank {} reports {} {}, not {}: every rank reports every iteration", what_point(p),
                                            r, series[r].size(), what, expected));
        for (std::size_t i = 0; i < series[r].size(); ++i)
            if (!finite_positive(series[r][i]))
                throw insane_figure(fmt::format("{}: rank {}, iteration {}: {} of {} s (must be finite and positive)",
                                                what_point(p), r, i, what, series[r][i]));
    }
}

std::vector<double> max_over_ranks(std::span<const std::vector<double>> per_rank) {
    std::vector<double> out(per_rank.front());
    for (const auto& rank : per_rank)
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], rank[i]);
    return out;
}

// The largest value's index, the lowest on a tie.
template <class T, class Key>
std::size_t index_of_max(const std::vector<T>& v, Key key) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < v.size(); ++i)
        if (key(v[i]) > key(v[best])) best = i;
    return best;
}

void check_times(const collective_point& p) {
    if (p.iterations == 0) throw insane_figure(fmt::format("{}: no iterations", what_point(p)));
    const double seq[] = {p.time_min_s, p.time_p50_s, p.time_max_s, p.time_s};
    for (double v : seq)
        if (!finite_positive(v)) throw insane_figure(fmt::format("{}: a time of {} s (must be finite and positive)", what_point(p), v));
    if (p.time_p50_s < p.time_min_s || p.time_max_s < p.time_p50_s || p.time_s < p.time_min_s * (1 - tolerance) ||
        p.time_s > p.time_max_s * (1 + tolerance))
        throw insane_figure(fmt::format("{}: iteration times out of order (min {} s, p50 {} s, max {} s, mean {} s)", what_point(p),
                                        p.time_min_s, p.time_p50_s, p.time_max_s, p.time_s));
    const double algbw = gbyte_from_bytes_per_s(algbw_bytes_per_s(p.size_bytes, p.time_s));
    const double busbw = gbyte_from_bytes_per_s(busbw_bytes_per_s(p.op, p.ranks, p.size_bytes, p.time_s));
    if (!agrees(p.algbw_gbyte_per_s, algbw))
        throw insane_figure(fmt::format("{}: algbw {} GB/s disagrees with {} bytes in {} s", what_point(p), p.algbw_gbyte_per_s,
                                        p.size_bytes, p.time_s));
    if (!agrees(p.busbw_gbyte_per_s, p.algbw_gbyte_per_s * busbw_factor(p.op, p.ranks)) || !agrees(p.busbw_gbyte_per_s, busbw))
        throw insane_figure(fmt::format("{}: busbw {} GB/s is not algbw {} GB/s × {}", what_point(p), p.busbw_gbyte_per_s,
                                        p.algbw_gbyte_per_s, busbw_factor(p.op, p.ranks)));
    if (!agrees(p.algbw_gbit_per_s, gbit_from_gbyte(p.algbw_gbyte_per_s)) || !agrees(p.busbw_gbit_per_s, gbit_from_gbyte(p.busbw_gbyte_per_s)))
        throw insane_figure(fmt::format("{}: Gbit/s figures are not 8 × the GB/s ones", what_point(p)));
}

void check_ranks(const collective_point& p) {
    if (p.rank_time_s.size() != p.ranks)
        throw insane_figure(fmt::format("{}: {} rank times, not {}", what_point(p), p.rank_time_s.size(), p.ranks));
    for (double v : p.rank_time_s)
        if (!finite_positive(v)) throw insane_figure(fmt::format("{}: a rank's mean time of {} s", what_point(p), v));
    const auto [lo, hi] = std::minmax_element(p.rank_time_s.begin(), p.rank_time_s.end());
    const auto slowest = index_of_max(p.rank_time_s, [](double v) { return v; });
    if (p.spread.min_s != *lo || p.spread.max_s != *hi || !agrees(p.spread.max_over_min, *hi / *lo))
        throw insane_figure(fmt::format("{}: the spread over ranks disagrees with the ranks' times", what_point(p)));
    if (p.slowest_rank != slowest)
        throw insane_figure(fmt::format("{}: the slowest rank is {}, not {}", what_point(p), slowest, p.slowest_rank));
    // Each iteration's maximum is at least every rank's time, so their mean is at least every rank's mean.
    if (p.spread.max_s > p.time_s * (1 + tolerance))
        throw insane_figure(fmt::format("{}: rank {}'s mean time {} s exceeds the reported time {} s", what_point(p), slowest,
                                        p.spread.max_s, p.time_s));
}

void check_links(const collective_point& p) {
    if (p.algo != collective_algo::ring) {
        if (!p.links.empty() || p.slowest_link)
            throw insane_figure(fmt::format("{}: links are timed for ring algorithms only, not {}", what_point(p), to_string(p.algo)));
        return;
    }
    if (p.links.empty() && !p.slowest_link) return;  // not timed at this size (assemble_collective_point)
    const std::size_t expected = is_chain(p) ? p.ranks - 1 : p.ranks;
    if (p.links.size() != expected)
        throw insane_figure(fmt::format("{}: {} ring links, not {}", what_point(p), p.links.size(), expected));
    for (std::size_t i = 0; i < expected; ++i) {
        const auto& l = p.links[i];
        if (l.from != i || l.to != (i + 1) % p.ranks)
            throw insane_figure(fmt::format("{}: link {} is {}, not rank {} -> rank {}", what_point(p), i, to_string(l), i, (i + 1) % p.ranks));
        if (l.bytes != ring_link_bytes(p.op, p.ranks, p.element, p.size_bytes, l.from))
            throw insane_figure(fmt::format("{}: {} carries {} bytes, not {}", what_point(p), to_string(l), l.bytes,
                                            ring_link_bytes(p.op, p.ranks, p.element, p.size_bytes, l.from)));
        if (!finite_positive(l.send_s) || l.send_s > p.rank_time_s[l.to] * (1 + tolerance))
            throw insane_figure(fmt::format("{}: {} carries data for {} s, its receiver rank {} takes {} s an iteration",
                                            what_point(p), to_string(l), l.send_s, l.to, p.rank_time_s[l.to]));
        if (!std::isfinite(l.gbit_per_s) || !agrees(l.gbit_per_s, gbit_per_s(static_cast<double>(l.bytes), l.send_s)))
            throw insane_figure(fmt::format("{}: {} at {} Gbit/s disagrees with {} bytes in {} s", what_point(p), to_string(l),
                                            l.gbit_per_s, l.bytes, l.send_s));
    }
    const auto& slowest = p.links[index_of_max(p.links, [](const collective_link& l) { return l.send_s; })];
    if (p.slowest_link != slowest)
        throw insane_figure(fmt::format("{}: the slowest link is {}", what_point(p), to_string(slowest)));
}

// The TCP counters: none, or one entry per rank, each sane; a link's retransmits with its
// segments, at most as many, and the sender's counters where both are known.
void check_tcp_counters(const collective_point& p) {
    if (!p.rank_tcp_counters.empty() && p.rank_tcp_counters.size() != p.ranks)
        throw insane_figure(fmt::format("{}: TCP counters of {} ranks, not {}", what_point(p), p.rank_tcp_counters.size(), p.ranks));
    for (std::size_t r = 0; r < p.rank_tcp_counters.size(); ++r)
        if (const auto& c = p.rank_tcp_counters[r]) {
            try {
                check_sane(*c, false);
            } catch (const insane_figure& e) {
                throw insane_figure(fmt::format("{}: rank {}'s {}", what_point(p), r, e.what()));
            }
        }
    for (const auto& l : p.links) {
        if (l.retransmits.has_value() != l.segments_sent.has_value())
            throw insane_figure(fmt::format("{}: {} has retransmits without segments sent, or the other way", what_point(p), to_string(l)));
        if (!l.retransmits) continue;
        if (*l.retransmits > *l.segments_sent)
            throw insane_figure(fmt::format("{}: {} retransmitted {} segments of {} sent", what_point(p), to_string(l),
                                            *l.retransmits, *l.segments_sent));
        if (l.from < p.rank_tcp_counters.size() && p.rank_tcp_counters[l.from] &&
            (p.rank_tcp_counters[l.from]->retransmits != *l.retransmits ||
             p.rank_tcp_counters[l.from]->segments_sent != *l.segments_sent))
            throw insane_figure(fmt::format("{}: {}'s TCP counts disagree with rank {}'s", what_point(p), to_string(l), l.from));
    }
}

void check_incast(const collective_point& p) {
    if (p.op != collective_op::incast) {
        if (p.incast) throw insane_figure(fmt::format("{}: incast figures for an op that is not incast", what_point(p)));
        return;
    }
    if (!p.incast) throw insane_figure(fmt::format("{}: no incast figures", what_point(p)));
    const auto& in = *p.incast;
    if (in.sender_gbit_per_s.size() != p.ranks - 1)
        throw insane_figure(fmt::format("{}: {} senders' rates, not {}", what_point(p), in.sender_gbit_per_s.size(), p.ranks - 1));
    const double size = static_cast<double>(p.size_bytes);
    for (unsigned s = 0; s + 1 < p.ranks; ++s)
        if (!finite_positive(in.sender_gbit_per_s[s]) || !agrees(in.sender_gbit_per_s[s], gbit_per_s(size, p.rank_time_s[s + 1])))
            throw insane_figure(fmt::format("{}: sender rank {} at {} Gbit/s disagrees with its time", what_point(p), s + 1,
                                            in.sender_gbit_per_s[s]));
    if (!finite_positive(in.total_gbit_per_s) ||
        !agrees(in.total_gbit_per_s, gbit_per_s(size * (p.ranks - 1), p.rank_time_s[incast_receiver])))
        throw insane_figure(fmt::format("{}: total goodput {} Gbit/s disagrees with the receiver's time", what_point(p), in.total_gbit_per_s));
    if (!agrees(in.fairness, jain_fairness(in.sender_gbit_per_s)))
        throw insane_figure(fmt::format("{}: fairness {} is not Jain's index of the senders' rates", what_point(p), in.fairness));
}

}  // namespace

std::string to_string(const collective_link& l) { return fmt::format("rank {} -> rank {}", l.from, l.to); }

std::string_view redop_name(collective_op op) {
    return op_traits(op).reduces ? "sum" : "none";
}

std::uint64_t ring_link_bytes(collective_op op, unsigned ranks, dtype element, std::uint64_t size_bytes, unsigned rank) {
    if (ranks < 2) throw spec_error(fmt::format("a ring needs at least 2 ranks, not {}", ranks));
    if (rank >= ranks) throw spec_error(fmt::format("rank {} is outside 0..{}", rank, ranks - 1));
    require_can_run(collective_algo::ring, op);
    return op_traits(op).ring_link_bytes(ranks, element, size_bytes, rank);
}

collective_point assemble_collective_point(collective_op op, collective_algo algo, unsigned ranks, dtype element,
                                           std::uint64_t size_bytes, std::span<const std::vector<double>> per_rank_iteration_s,
                                           std::span<const std::vector<double>> per_rank_send_s,
                                           std::span<const std::uint64_t> wrong_elements_per_rank) {
    check_shape(op, algo, ranks, element, size_bytes);
    collective_point p;
    p.op = op;
    p.algo = algo;
    p.ranks = ranks;
    p.element = element;
    p.size_bytes = size_bytes;
    p.count = size_bytes / dtype_bytes(element);

    const auto n = per_rank_iteration_s.empty() ? 0 : per_rank_iteration_s.front().size();
    check_series("iteration times", p, per_rank_iteration_s, n, false);
    if (n == 0) throw insane_figure(fmt::format("{}: no iterations", what_point(p)));
    if (algo == collective_algo::ring && !per_rank_send_s.empty()) {  // empty: the links were not timed
        check_series("send times", p, per_rank_send_s, n, is_chain(p));
        for (unsigned r = 0; r < ranks; ++r)
            for (std::size_t i = 0; i < per_rank_send_s[r].size(); ++i)
                if (per_rank_send_s[r][i] > per_rank_iteration_s[(r + 1) % ranks][i] * (1 + tolerance))
                    throw insane_figure(fmt::format("{}: iteration {}: the link rank {} -> rank {} carried data for {} s of "
                                                    "its receiver's iteration of {} s",
                                                    what_point(p), i, r, (r + 1) % ranks, per_rank_send_s[r][i],
                                                    per_rank_iteration_s[(r + 1) % ranks][i]));
    } else if (!per_rank_send_s.empty()) {
        throw insane_figure(fmt::format("{}: send times are taken on rings only, not with {}", what_point(p), to_string(algo)));
    }
    if (!wrong_elements_per_rank.empty() && wrong_elements_per_rank.size() != ranks)
        throw insane_figure(fmt::format("{}: wrong elements of {} ranks, not {}", what_point(p), wrong_elements_per_rank.size(), ranks));

    // nccl-tests' time: an iteration lasts until its slowest rank is done; the mean over iterations is reported.
    auto slowest_per_iteration = max_over_ranks(per_rank_iteration_s);
    p.iterations = n;
    p.time_s = mean(slowest_per_iteration);
    std::sort(slowest_per_iteration.begin(), slowest_per_iteration.end());
    p.time_min_s = slowest_per_iteration.front();
    p.time_p50_s = percentile_sorted(slowest_per_iteration, 0.5);
    p.time_max_s = slowest_per_iteration.back();
    p.algbw_gbyte_per_s = gbyte_from_bytes_per_s(algbw_bytes_per_s(size_bytes, p.time_s));
    p.busbw_gbyte_per_s = gbyte_from_bytes_per_s(busbw_bytes_per_s(op, ranks, size_bytes, p.time_s));
    p.algbw_gbit_per_s = gbit_from_gbyte(p.algbw_gbyte_per_s);
    p.busbw_gbit_per_s = gbit_from_gbyte(p.busbw_gbyte_per_s);

    for (const auto& rank : per_rank_iteration_s) p.rank_time_s.push_back(mean(rank));
    const auto [lo, hi] = std::minmax_element(p.rank_time_s.begin(), p.rank_time_s.end());
    p.spread = {*lo, *hi, *hi / *lo};
    p.slowest_rank = static_cast<unsigned>(index_of_max(p.rank_time_s, [](double v) { return v; }));

    if (algo == collective_algo::ring && !per_rank_send_s.empty()) {
        for (unsigned r = 0; r < ranks; ++r) {
            if (per_rank_send_s[r].empty()) continue;  // the end of a chain
            collective_link l{r, (r + 1) % ranks, ring_link_bytes(op, ranks, element, size_bytes, r), mean(per_rank_send_s[r]), 0,
                              std::nullopt, std::nullopt};
            l.gbit_per_s = gbit_per_s(static_cast<double>(l.bytes), l.send_s);
            p.links.push_back(l);
        }
        p.slowest_link = p.links[index_of_max(p.links, [](const collective_link& l) { return l.send_s; })];
    }
    if (!wrong_elements_per_rank.empty()) {
        p.wrong = 0;
        for (auto w : wrong_elements_per_rank) *p.wrong += w;
    }
    if (op == collective_op::incast) {
        incast_figures in;
        const double size = static_cast<double>(size_bytes);
        for (unsigned s = 0; s < ranks; ++s)
            if (s != incast_receiver) in.sender_gbit_per_s.push_back(gbit_per_s(size, p.rank_time_s[s]));
        in.total_gbit_per_s = gbit_per_s(size * (ranks - 1), p.rank_time_s[incast_receiver]);
        in.fairness = jain_fairness(in.sender_gbit_per_s);
        p.incast = std::move(in);
    }
    check_sane(p);
    return p;
}

void attach_link_tcp_counts(collective_point& p) {
    auto attach = [&](collective_link& l) {
        if (l.from < p.rank_tcp_counters.size() && p.rank_tcp_counters[l.from]) {
            l.retransmits = p.rank_tcp_counters[l.from]->retransmits;
            l.segments_sent = p.rank_tcp_counters[l.from]->segments_sent;
        } else {
            l.retransmits.reset();
            l.segments_sent.reset();
        }
    };
    for (auto& l : p.links) attach(l);
    if (p.slowest_link) attach(*p.slowest_link);
}

void check_sane(const collective_point& p) {
    check_shape(p.op, p.algo, p.ranks, p.element, p.size_bytes);
    if (p.count != p.size_bytes / dtype_bytes(p.element))
        throw insane_figure(fmt::format("{}: count {} is not the size over {}-byte elements", what_point(p), p.count, dtype_bytes(p.element)));
    check_times(p);
    check_ranks(p);
    check_links(p);
    check_tcp_counters(p);
    check_incast(p);
}

}  // namespace meshperf::core
