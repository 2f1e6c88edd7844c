#include "analysis/collective/schedule_costs.hpp"

#include "core/collective/plan.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <unordered_map>
#include <nlohmann/json.hpp>
#include <vector>

namespace meshperf::analysis {

namespace {

/// One message of a step on its way to the receiver.
struct in_flight {
    double first_byte_s = 0;  ///< when its first byte left the sender
    double last_byte_s = 0;   ///< when its last byte left the sender
    double bytes = 0;
    double beta_bytes_per_s = 0;  ///< its link's
    double alpha_s = 0;           ///< its link's
};

}  // namespace

bool schedule_modelled(core::collective_op op, core::collective_algo algo) {
    const auto* p = core::prediction_of(op, algo);
    return p && p->walk;
}

double schedule_message_bytes(core::collective_op op, core::collective_algo algo, std::uint64_t size_bytes) {
    const double s = static_cast<double>(size_bytes);
    const auto* p = core::prediction_of(op, algo);
    if (p && p->walk && !p->walk->pipelined) return s;
    return std::min(s, static_cast<double>(core::pipeline_piece_bytes));
}

schedule_cost schedule_time(core::collective_op op, core::collective_algo algo, unsigned ranks, core::dtype element,
                            std::uint64_t size_bytes, const link_between& links) {
    std::vector<core::collective_plan> plans;
    plans.reserve(ranks);
    for (unsigned r = 0; r < ranks; ++r) plans.push_back(core::plan_collective(op, algo, ranks, r, element, size_bytes));
    // Each pair's link, asked for and checked once (a schedule uses a few pairs of the p²).
    std::unordered_map<std::uint64_t, link_model> pair;
    const auto link_of = [&](unsigned from, unsigned to) -> const link_model& {
        const auto key = static_cast<std::uint64_t>(from) * ranks + to;
        if (const auto it = pair.find(key); it != pair.end()) return it->second;
        const auto l = links(from, to);
        check_link(l, fmt::format("rank {} -> rank {}", from, to));
        return pair.emplace(key, l).first->second;
    };
    const std::size_t steps = plans.front().steps.size();

    schedule_cost out;
    out.steps = steps;
    std::vector<double> done(ranks, 0.0);          // when each rank finished its last step
    std::vector<double> inbound_free(ranks, 0.0);  // when each rank's inbound link is idle
    std::vector<double> sent(ranks);               // when each rank's sends of the step are done
    std::vector<std::vector<in_flight>> arriving(ranks);
    for (std::size_t s = 0; s < steps; ++s) {
        for (auto& a : arriving) a.clear();
        sent = done;
        for (unsigned r = 0; r < ranks; ++r) {
            // The step's sends leave together and share the rank's link, which carries their
            // sum no faster than the fastest link out of it; each is no faster than its own.
            const auto& sends = plans[r].steps[s].sends;
            double total = 0, outbound_beta = 0;
            for (const auto& send : sends) {
                total += static_cast<double>(send.range.count * plans[r].element_bytes);
                outbound_beta = std::max(outbound_beta, link_of(r, send.peer).beta_bytes_per_s);
            }
            const double start = done[r];
            for (const auto& send : sends) {
                const auto& l = link_of(r, send.peer);
                const double bytes = static_cast<double>(send.range.count * plans[r].element_bytes);
                out.message_bytes = std::max(out.message_bytes, bytes);
                // Nothing on the wire for a latency-only link (β = ∞).
                const double last = start + std::max(total / outbound_beta, bytes / l.beta_bytes_per_s);
                sent[r] = std::max(sent[r], last);
                arriving[send.peer].push_back({start, last, bytes, l.beta_bytes_per_s, l.alpha_s});
            }
        }
        for (unsigned q = 0; q < ranks; ++q) {
            auto& in = arriving[q];
            std::sort(in.begin(), in.end(), [](const auto& a, const auto& b) { return a.first_byte_s < b.first_byte_s; });
            // The rank's own link takes them one after another, no faster than the fastest
            // link into it (a slow sender's bytes trickle in beside the others').
            double inbound_beta = 0;
            for (const auto& m : in) inbound_beta = std::max(inbound_beta, m.beta_bytes_per_s);
            double landed = sent[q];
            for (const auto& m : in) {
                inbound_free[q] = std::max(inbound_free[q], m.first_byte_s) + m.bytes / inbound_beta;
                landed = std::max(landed, std::max(m.last_byte_s, inbound_free[q]) + m.alpha_s);
            }
            done[q] = landed;
        }
    }
    const auto last = std::max_element(done.begin(), done.end());
    out.time_s = *last;
    out.critical_rank = static_cast<unsigned>(last - done.begin());
    return out;
}

schedule_cost schedule_time(core::collective_op op, core::collective_algo algo, unsigned ranks, core::dtype element,
                            std::uint64_t size_bytes, const link_model& link) {
    return schedule_time(op, algo, ranks, element, size_bytes, [&](unsigned, unsigned) { return link; });
}

nlohmann::json to_json(const schedule_cost& c) {
    return {{"time_s", c.time_s}, {"steps", c.steps}, {"message_bytes", c.message_bytes}, {"critical_rank", c.critical_rank}};
}

}  // namespace meshperf::analysis
