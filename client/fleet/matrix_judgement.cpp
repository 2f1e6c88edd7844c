#include "client/fleet/matrix_judgement.hpp"

namespace meshperf::client {

analysis::group_verdict judge_matrix_groups(const analysis::matrix_analysis& a, const std::optional<topology>& t,
                                            const std::vector<analysis::link_cause>& aside) {
    return t ? analysis::judge_groups(a, t->group_of, t->group_names.size(), aside) : analysis::judge_without_groups(a, aside);
}

std::vector<analysis::link_cause> links_the_rails_explain(const analysis::matrix_analysis& a,
                                                          const analysis::rail_fleet_verdict& r) {
    std::vector<analysis::link_cause> aside;
    if (r.explained.empty()) return aside;
    aside.assign(a.links.size(), analysis::link_cause::none);
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& v = a.links[i];
        if (!(v.bad && v.link.reachable && v.rails_bad && !v.bandwidth_bad && !v.latency_bad && !v.counters_bad)) continue;
        switch (r.explanation(v.link.from, v.link.to)) {
            case analysis::rail_explanation::plane: aside[i] = analysis::link_cause::rail_plane; break;
            case analysis::rail_explanation::uplink: aside[i] = analysis::link_cause::rail_uplink; break;
            case analysis::rail_explanation::none: break;
        }
    }
    return aside;
}

}  // namespace meshperf::client
