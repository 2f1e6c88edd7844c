#include "client/fleet/triage_run.hpp"

#include "analysis/triage_schedule.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/fleet/matrix_judgement.hpp"

#include <algorithm>

namespace meshperf::client {

triage_run run_triage(matrix_runner& m, const std::optional<topology>& topo, bool no_retest) {
    const std::size_t n = m.names().size();
    const std::vector<std::size_t> group_of = topo ? topo->group_of : std::vector<std::size_t>{};
    triage_run run;
    const auto rounds = analysis::triage_schedule(n, group_of);
    std::vector<std::vector<analysis::directed_link>> waves;
    for (const auto& r : rounds) {
        auto w = analysis::triage_waves(n, r.links);
        run.rounds.push_back({{"kind", analysis::to_string(r.kind)}, {"shift", r.shift}, {"links", r.links.size()}, {"waves", w.size()}});
        for (auto& x : w) waves.push_back(std::move(x));
    }
    run.shift_rounds = rounds.size();
    run.waves = waves.size();
    for (std::size_t k = 0; k < waves.size(); ++k) m.run_links(waves[k], "shift-round wave", k + 1, waves.size(), false);
    if (no_retest) return run;
    const auto first = m.analyze();
    const auto more = analysis::localisation_links(analysis::localisation_request(first, judge_matrix_groups(first, topo), group_of));
    const auto local = analysis::triage_waves(n, more);
    for (std::size_t k = 0; k < local.size(); ++k) m.run_links(local[k], "localisation round", k + 1, local.size(), true);
    // A partner test that read bad, and that no host or uplink explains, is measured once
    // more before it is reported, as every bad link of the shift rounds was.
    const auto second = m.analyze();
    const auto causes = judge_matrix_groups(second, topo);
    std::vector<analysis::directed_link> again;
    for (std::size_t i = 0; i < second.links.size(); ++i) {
        const auto& l = second.links[i];
        if (l.bad && l.link.reachable && !m.links().retested(i) && causes.cause[i] == analysis::link_cause::none)
            again.push_back({l.link.from, l.link.to});
    }
    const auto recheck = analysis::triage_waves(n, again);
    for (std::size_t k = 0; k < recheck.size(); ++k) m.run_links(recheck[k], "localisation recheck", k + 1, recheck.size(), true);
    run.localisation_rounds = local.size() + recheck.size();
    return run;
}

std::size_t widest_wave(std::size_t n, const std::optional<topology>& topo) {
    std::size_t most = 1;
    for (const auto& r : analysis::triage_schedule(n, topo ? topo->group_of : std::vector<std::size_t>{}))
        for (const auto& w : analysis::triage_waves(n, r.links)) most = std::max(most, w.size());
    return most;
}

}  // namespace meshperf::client
