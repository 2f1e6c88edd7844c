#pragma once
/// `check --rails`: each rail of a run over rails judged against a fraction of its link
/// rate, as ngc_multinode_perf passes a rail at 90% of its port rate (docs/rails.md).
#include "core/check.hpp"
#include "core/result.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::core {

/// One verdict per rail of every bandwidth and bidir point of `run` that has rails:
/// CRITICAL below min_rate_fraction × the rail's rate (× 2 for bidir: the rate is per
/// direction), when the rail moved nothing or failed (its error the reason); UNKNOWN when its
/// rate is unknown. The figures carry the rail's name. Throws spec_error unless 0 < min_rate_fraction <= 1.
std::vector<figure_verdict> rail_verdicts(const run_result& run, double min_rate_fraction);

/// One verdict per rail of every bandwidth and bidir point of `run` that has rails, against
/// an absolute floor (`check --rails ... --min-gbit X`: a floor given with rails is each
/// rail's, not the aggregate's): CRITICAL below `min_gbit`, when the rail moved nothing or
/// failed. The figures carry the rail's name. Throws spec_error unless min_gbit > 0.
std::vector<figure_verdict> rail_floor_verdicts(const run_result& run, double min_gbit);

/// One rail of a link that is not OK: the initiator's rail (rail_pair::name) and the sentence.
struct rail_problem {
    std::string rail;
    std::string text;
};

/// The problems of the rails of one run from host `from` to host `to` (names as the user
/// gave them), one sentence each naming both ends ("h1:7470 rail ra2 -> h2:7470 rail rb2:
/// 0.0957 Gbit/s at 1 MiB, below 0.8 x link rate 0.2 = 0.16 Gbit/s (48% of the link)"), for
/// `matrix --rails`: a rail that moved nothing in a bandwidth point; with min_rate_fraction
/// > 0 also one below that share of its rate (rail_verdicts). A rail whose rate is unknown
/// is no problem but sets `unknown_rate`. The peer's rail is named from run.spec.rails.
std::vector<rail_problem> rail_link_problems(const run_result& run, const std::string& from, const std::string& to,
                                             double min_rate_fraction, bool& unknown_rate);

/// The rails of one link that are slow against their siblings, for `matrix --rails` without
/// --min-rate-fraction: in each bandwidth or bidir point (over `runs`, so that --rails-serial's
/// one run per rail counts too), a rail below `fraction` × the median of the point's rails
/// that moved bytes (at least 2). Compared by rate_fraction when every such rail has a link
/// rate (rails of mixed speeds), by Gbit/s otherwise. A rail that failed or moved nothing is
/// left to rail_link_problems. One sentence each, named as there ("h1:7470 rail ra2 -> h2:7470
/// rail rb2: 0.0957 Gbit/s at 1 MiB, 50% of the median of the link's 3 rails (0.191 Gbit/s),
/// below 0.9"). Throws spec_error unless 0 < fraction <= 1.
std::vector<rail_problem> rail_sibling_problems(std::span<const run_result> runs, const std::string& from, const std::string& to,
                                                double fraction);

/// What a link's rail carried, as `matrix --rails` compares it across the matrix
/// (analysis/rail_planes): the rail's figures in the largest bandwidth point (a bidir one
/// when the runs have no bandwidth point).
struct rail_reading {
    std::string name;       ///< the initiator's rail (rail_pair::name)
    std::string peer_name;  ///< the peer's rail matched with it ("?" when the spec lacks it)
    double gbit_per_s = 0;
    std::optional<double> rate_fraction;  ///< its share of its link rate (rail_figures::rate_fraction)
    bool failed = false;    ///< failed, or moved nothing
};

/// One reading per rail of `runs` (--rails-serial's one run per rail included), in the order
/// the rails first appear.
std::vector<rail_reading> rail_readings(std::span<const run_result> runs);

/// Adds rail verdicts to a result that has figures: its state becomes the worst of all. A
/// result without figures (UNKNOWN, the check not made) is left as it is.
void add_rail_verdicts(check_result&, std::vector<figure_verdict>);

}  // namespace meshperf::core
