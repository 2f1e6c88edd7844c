#pragma once
/// Robust classification of the links of a cluster matrix: which directed links are bad,
/// which hosts are suspect, which hosts could not be reached. Pure functions, no I/O.
///
/// Rules (thresholds in outlier_options):
/// - Medians and median absolute deviations (MAD) of bandwidth and latency are taken over
///   all reachable links that carry the figure.
/// - Each figure is judged against a reference: its median; with small_matrix_hosts hosts or
///   fewer, the median of the better half of the links (the faster half's bandwidths, the
///   quicker half's latencies). There one slow host's links are half of all links or more
///   (2 of n−1 per host: 4 of 6 with 3 hosts), so the median would be the slow figure and
///   nothing would look bad.
/// - A reachable link is bad when its bandwidth < bandwidth_fraction × the bandwidth
///   reference, or its latency > latency_multiple × the latency reference. Strict
///   comparisons: a link exactly at the threshold is healthy.
/// - A host is suspect when more than suspect_fraction of its measured links (reachable
///   links from it or to it that carry a figure) are bad.
/// - An unreachable link is reported bad with reason "unreachable" but counts towards no
///   median and no suspect. A host is named unreachable when the caller says its daemon is
///   down, or when it failed with at least two different peers: hosts are taken greedily
///   from the one with most such peers, and each one named explains all its failed links
///   (so the peers of a dead host are not named too). One failed pair alone names no host.
#include "analysis/matrix_schedule.hpp"

#include <cstddef>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::analysis {

/// One directed link of the matrix as measured: `from` initiated and sent to `to`.
struct link_sample {
    std::size_t from = 0;
    std::size_t to = 0;
    bool reachable = true;             ///< false: the measurement could not be made
    std::optional<double> gbit_per_s;  ///< bandwidth, 10^9 bit/s (absent: not measured)
    std::optional<double> lat_us;      ///< one-way latency, microseconds (absent: not measured)
    std::string error;                 ///< why it was unreachable (empty when reachable)
    /// Counters of its measurement that are not OK, one sentence each (core::counter_verdicts_of):
    /// they make the link bad for errors as well as for speed.
    std::vector<std::string> counter_problems;
    /// With `matrix --rails`: the rails of its measurement that are not OK, one sentence
    /// each naming both ends ("10.0.0.1:7470 rail ra2 -> 10.0.0.2:7470 rail rb2: ..."): a
    /// rail that moved nothing, or below --min-rate-fraction of its link rate, makes the link
    /// bad whatever its aggregate figure.
    std::vector<std::string> rail_problems;
};

/// The links of a matrix one at a time: how many, and link i made when asked, so that a
/// caller that keeps its links compact (link_store) never holds them all as link_sample.
struct link_source {
    std::size_t count = 0;
    std::function<link_sample(std::size_t)> at;
};

/// With this many hosts or fewer the links are judged against the median of their better
/// half instead of the median (see above).
inline constexpr std::size_t small_matrix_hosts = 4;

/// Thresholds of the rules. validate() checks them.
struct outlier_options {
    double bandwidth_fraction = 0.9;   ///< bad below this fraction of the median bandwidth, in (0, 1]
    double latency_multiple = 2.0;     ///< bad above this multiple of the median latency, >= 1
    double suspect_fraction = 0.5;     ///< suspect when more than this share of links is bad, in [0, 1)
};

/// Throws core::spec_error naming the option when a threshold is outside its range or not finite.
void validate(const outlier_options&);

/// Median and MAD of one figure over the reachable links; absent when no link has it.
struct robust_stats {
    std::size_t count = 0;
    double median = 0;
    double mad = 0;                    ///< median of |x − median|, unscaled
};

/// Verdict on one link.
struct link_verdict {
    link_sample link;
    bool bad = false;
    std::string reason;                ///< empty when healthy; otherwise the rule(s) and numbers, "; "-joined
    bool bandwidth_bad = false;        ///< the bandwidth rule is broken (reachable links only)
    bool latency_bad = false;          ///< the latency rule is broken (reachable links only)
    bool counters_bad = false;         ///< its counters moved that should not have (reachable links only)
    bool rails_bad = false;            ///< one of its rails is not OK (rail_problems; reachable links only)
    std::optional<double> bandwidth_ratio;  ///< gbit_per_s / the bandwidth reference
    std::optional<double> latency_ratio;    ///< lat_us / the latency reference
};

/// Per-host tally.
struct host_tally {
    std::size_t measured = 0;          ///< reachable links with a figure, from or to the host
    std::size_t bad = 0;               ///< of those, bad
    std::size_t unreachable = 0;       ///< unreachable links from or to the host
    bool suspect = false;
    bool unreachable_host = false;
};

/// The judged matrix.
struct matrix_analysis {
    std::size_t host_count = 0;
    outlier_options options;
    std::optional<robust_stats> bandwidth;  ///< over reachable links, Gbit/s
    std::optional<robust_stats> latency;    ///< over reachable links, us
    /// What the links are judged against: "median", or "better-half median" with
    /// small_matrix_hosts hosts or fewer.
    std::string reference_rule = "median";
    std::optional<double> bandwidth_reference;  ///< Gbit/s, present with bandwidth
    std::optional<double> latency_reference;    ///< us, present with latency
    std::vector<link_verdict> links;        ///< in input order
    std::vector<host_tally> hosts;          ///< indexed by host
    std::vector<std::size_t> suspects;      ///< ascending host indices
    std::vector<std::size_t> unreachable;   ///< ascending host indices
};

/// Median and MAD of values (unsorted; copied). Absent for no values.
std::optional<robust_stats> robust_summary(std::span<const double> values);

/// The median of values (unsorted; copied); absent for no values.
std::optional<double> median_of(std::span<const double> values);

/// Whether `bad` is more than `fraction` of `total` (false when total is 0): the suspect and
/// uplink rules' test (analysis/triage_verdict, analysis/rail_planes).
inline bool share_above(std::size_t bad, std::size_t total, double fraction) {
    return total > 0 && static_cast<double>(bad) > fraction * static_cast<double>(total);
}

/// Judges the links of a matrix of host_count hosts. `down_hosts` are hosts the caller
/// knows to be unreachable (their daemon did not answer). Throws core::spec_error when a link
/// names a host >= host_count or itself, when a figure is not finite or not positive, or
/// when the options are invalid.
matrix_analysis analyze_matrix(std::size_t host_count, std::span<const link_sample> links,
                               const outlier_options& options = {},
                               std::span<const std::size_t> down_hosts = {});

/// The same, the links read from `links` (each made a few times: once per pass).
matrix_analysis analyze_link_source(std::size_t host_count, const link_source& links, const outlier_options& options = {},
                                    std::span<const std::size_t> down_hosts = {});

/// Judges one reachable link's figures against the references of `a` (as analyze_matrix
/// does): e.g. a retest's first measurement, to tell which of its rules it broke too.
link_verdict judge_link(const link_sample&, const matrix_analysis& a);

/// Indices into analysis.links of the reachable bad links: what to measure again before
/// reporting. Unreachable links are not retested. The caller puts the retest's figures in
/// place of the first ones and calls analyze_matrix again; what is still bad is reported.
std::vector<std::size_t> links_to_retest(const matrix_analysis&);

/// The unordered pairs of those links, for schedule_pairs().
std::vector<host_pair> pairs_to_retest(const matrix_analysis&);

/// JSON of a judged matrix without its links[] (what a writer streams the links into):
/// host_count, options, median, mad, reference, hosts[], suspects[], unreachable[].
nlohmann::json to_json_without_links(const matrix_analysis&, std::span<const std::string> host_names = {});

/// JSON of a judged matrix: medians, references ({rule, gbit_per_s, lat_us}), thresholds,
/// links[] {from, to, reachable, gbit_per_s, lat_us, bandwidth_ratio, latency_ratio, bad,
/// bandwidth_bad, latency_bad, counters_bad, counter_problems, rails_bad, rail_problems, reason, error},
/// hosts[], suspects[],
/// unreachable[]. Hosts are named by `host_names` (the addresses as given; must be
/// host_count long) or, when it is empty, by index. Absent figures are null.
nlohmann::json to_json(const matrix_analysis&, std::span<const std::string> host_names = {});

/// JSON of one link, hosts named as above.
nlohmann::json to_json(const link_verdict&, std::span<const std::string> host_names = {});

}  // namespace meshperf::analysis
