#include "analysis/schedule_costs.hpp"

#include "core/collective_plan.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <vector>

namespace meshperf::analysis {

namespace {

/// One message of a step on its way to the receiver.
struct in_flight {
    double first_byte_s = 0;  ///< when its first byte left the sender
    double last_byte_s = 0;   ///< when its last byte left the sender
    double bytes = 0;
};

}  // namespace

bool schedule_modelled(core::collective_op op, core::collective_algo algo) {
    return op == core::collective_op::incast ||
           (op == core::collective_op::broadcast && algo == core::collective_algo::tree);
}

double schedule_message_bytes(core::collective_op op, core::collective_algo, unsigned, std::uint64_t size_bytes) {
    const double s = static_cast<double>(size_bytes);
    if (op == core::collective_op::incast) return s;
    return std::min(s, static_cast<double>(core::pipeline_piece_bytes));
}

schedule_cost schedule_time(core::collective_op op, core::collective_algo algo, unsigned ranks, core::dtype element,
                            std::uint64_t size_bytes, const link_model& link) {
    if (!std::isfinite(link.alpha_s) || link.alpha_s < 0)
        throw core::spec_error(fmt::format("link: latency alpha must be >= 0 and finite, got {} s", link.alpha_s));
    if (std::isnan(link.beta_bytes_per_s) || link.beta_bytes_per_s <= 0)
        throw core::spec_error(fmt::format("link: bandwidth beta must be > 0, got {} B/s", link.beta_bytes_per_s));
    std::vector<core::collective_plan> plans;
    plans.reserve(ranks);
    for (unsigned r = 0; r < ranks; ++r) plans.push_back(core::plan_collective(op, algo, ranks, r, element, size_bytes));
    const double seconds_per_byte = 1.0 / link.beta_bytes_per_s;  // 0 for a latency-only link
    const std::size_t steps = plans.front().steps.size();

    schedule_cost out;
    out.steps = steps;
    std::vector<double> done(ranks, 0.0);       // when each rank finished its last step
    std::vector<double> inbound_free(ranks, 0.0);  // when each rank's inbound link is idle
    std::vector<std::vector<in_flight>> arriving(ranks);
    for (std::size_t s = 0; s < steps; ++s) {
        for (auto& a : arriving) a.clear();
        std::vector<double> sent(done);
        for (unsigned r = 0; r < ranks; ++r)
            for (const auto& send : plans[r].steps[s].sends) {
                const double bytes = static_cast<double>(send.range.count * plans[r].element_bytes);
                out.message_bytes = std::max(out.message_bytes, bytes);
                const double first = sent[r];
                sent[r] += bytes * seconds_per_byte;
                arriving[send.peer].push_back({first, sent[r], bytes});
            }
        for (unsigned q = 0; q < ranks; ++q) {
            auto& in = arriving[q];
            std::sort(in.begin(), in.end(), [](const auto& a, const auto& b) { return a.first_byte_s < b.first_byte_s; });
            double landed = sent[q];
            for (const auto& m : in) {
                inbound_free[q] = std::max(inbound_free[q], m.first_byte_s) + m.bytes * seconds_per_byte;
                landed = std::max(landed, std::max(m.last_byte_s, inbound_free[q]) + link.alpha_s);
            }
            done[q] = landed;
        }
    }
    const auto last = std::max_element(done.begin(), done.end());
    out.time_s = *last;
    out.critical_rank = static_cast<unsigned>(last - done.begin());
    return out;
}

nlohmann::json to_json(const schedule_cost& c) {
    return {{"time_s", c.time_s}, {"steps", c.steps}, {"message_bytes", c.message_bytes}, {"critical_rank", c.critical_rank}};
}

}  // namespace meshperf::analysis
