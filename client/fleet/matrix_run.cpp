#include "client/fleet/matrix_run.hpp"

#include "analysis/matrix_schedule.hpp"
#include "client/fleet/matrix_judgement.hpp"

namespace meshperf::client {

matrix_outcome run_matrix(matrix_runner& m, const std::optional<topology>& topo, bool triage, bool no_retest) {
    matrix_outcome out;
    auto& a = out.analysis;
    if (triage) {
        out.triage = run_triage(m, topo, no_retest);
        out.rounds = out.triage.shift_rounds;
        out.retest_rounds = out.triage.localisation_rounds;
        a = m.analyze();
    } else {
        m.run_schedule();
        out.rounds = analysis::round_count(m.names().size());
        a = m.analyze();
        if (!no_retest && !analysis::links_to_retest(a).empty()) {
            out.retest_rounds = m.retest(a);
            a = {};  // not two verdicts of every link at once
            a = m.analyze();
        }
    }
    out.rails = m.judge_rails(topo);
    const auto aside = out.rails ? links_the_rails_explain(a, *out.rails) : std::vector<analysis::link_cause>{};
    if (triage || topo || !aside.empty()) out.groups = judge_matrix_groups(a, topo, aside);
    if (topo || !aside.empty()) analysis::apply_suspects(*out.groups, a);
    return out;
}

}  // namespace meshperf::client
