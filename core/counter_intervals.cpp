#include "core/counter_intervals.hpp"

#include "core/counter_verdicts.hpp"

#include <algorithm>

namespace meshperf::core {

void counter_interval_tracker::start(const counter_values& first) {
    last_ = first;
    intervals_ = 0;
    spread_.clear();
    went_down_.clear();
}

void counter_interval_tracker::add(const counter_values& reading, double at_s) {
    if (!last_) return;
    ++intervals_;
    for (const auto& [name, value] : reading) {
        const auto before = last_->find(name);
        if (before == last_->end()) continue;
        if (value < before->second) {
            if (std::find(went_down_.begin(), went_down_.end(), name) == went_down_.end()) went_down_.push_back(name);
            continue;
        }
        const auto rise = value - before->second;
        if (rise == 0 || meaning_of(name) == counter_meaning::traffic) continue;
        auto [it, first_time] = spread_.try_emplace(name);
        auto& s = it->second;
        if (first_time) s.first_at_s = at_s;
        ++s.intervals;
        s.max_increase = std::max(s.max_increase, rise);
    }
    last_ = reading;
}

void counter_interval_tracker::apply(counter_group_delta& group) const {
    for (const auto& name : went_down_) {
        group.deltas.erase(name);
        if (std::find(group.resets.begin(), group.resets.end(), name) == group.resets.end()) group.resets.push_back(name);
        std::erase(group.saturated, name);
    }
    for (const auto& [name, s] : spread_)
        if (group.deltas.count(name) && std::find(went_down_.begin(), went_down_.end(), name) == went_down_.end())
            group.intervals[name] = s;
}

}  // namespace meshperf::core
