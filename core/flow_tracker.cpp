#include "core/flow_tracker.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>

namespace meshperf::core {

flow_tracker::flow_tracker(std::size_t streams, double warmup_s) : streams_(streams), warmup_s_(warmup_s) {}

void flow_tracker::add(double t_s, std::span<const std::uint64_t> bytes) {
    if (bytes.size() != streams_ || t_s <= last_t_) return;
    last_t_ = t_s;
    last_bytes_.assign(bytes.begin(), bytes.end());
    if (times_.empty() && t_s < warmup_s_) return;
    if (!times_.empty()) {
        const auto prev = std::accumulate(bytes_.back().begin(), bytes_.back().end(), std::uint64_t{0});
        const auto now = std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0});
        interval_rates_.push_back(static_cast<double>(now - prev) / (t_s - times_.back()));
        blocks_.add(interval_rates_.back());
    }
    times_.push_back(t_s);
    bytes_.emplace_back(bytes.begin(), bytes.end());
}

double flow_tracker::measured_s() const { return times_.size() < 2 ? 0.0 : times_.back() - times_.front(); }

double flow_tracker::mean_interval_rate() const { return mean(interval_rates_); }

double flow_tracker::relative_half_width() const {
    const double m = mean_interval_rate();
    if (interval_rates_.size() < 2 || m <= 0) return std::numeric_limits<double>::infinity();
    return mean_ci_half_width(interval_rates_) / m;
}

interval_choice flow_tracker::precision() const {
    const auto means = blocks_.means();
    return choose_interval(relative_half_width(), means, mean_interval_rate());
}

std::vector<double> flow_tracker::block_gbit_per_s() const {
    auto v = blocks_.means();
    for (auto& x : v) x = gbit_from_bytes_per_s_by_factor(x);
    return v;
}

flow_figures flow_tracker::figures(const std::string& direction, std::uint64_t size_bytes) const {
    if (times_.size() < 2) throw insane_figure(fmt::format("{}: no measured interval after the warm-up", direction));
    flow_figures f;
    f.direction = direction;
    f.seconds = measured_s();
    for (std::size_t s = 0; s < streams_; ++s) {
        const auto moved = bytes_.back()[s] - bytes_.front()[s];
        f.bytes += moved;
        f.stream_gbit_per_s.push_back(gbit_per_s(static_cast<double>(moved), f.seconds));
    }
    if (f.bytes == 0) throw insane_figure(fmt::format("{}: no bytes arrived in the measured window", direction));
    f.gbit_per_s = gbit_per_s(static_cast<double>(f.bytes), f.seconds);
    f.msg_per_s = static_cast<double>(f.bytes) / static_cast<double>(size_bytes) / f.seconds;
    const auto [lo, hi] = std::minmax_element(interval_rates_.begin(), interval_rates_.end());
    f.interval_min_gbit = gbit_from_bytes_per_s(*lo);
    f.interval_max_gbit = gbit_from_bytes_per_s(*hi);
    return f;
}

bool flow_tracker::has_bytes() const {
    return std::any_of(last_bytes_.begin(), last_bytes_.end(), [](std::uint64_t b) { return b > 0; });
}

bool flow_tracker::window_empty() const {
    if (times_.size() < 2) return true;
    const auto first = std::accumulate(bytes_.front().begin(), bytes_.front().end(), std::uint64_t{0});
    const auto last = std::accumulate(bytes_.back().begin(), bytes_.back().end(), std::uint64_t{0});
    return last <= first;
}

flow_figures flow_tracker::whole_point_figures(const std::string& direction, std::uint64_t size_bytes) const {
    flow_figures f;
    f.direction = direction;
    f.seconds = last_t_ > 0 ? last_t_ : 0.0;
    for (const auto b : last_bytes_) {
        f.bytes += b;
        f.stream_gbit_per_s.push_back(f.seconds > 0 ? gbit_per_s(static_cast<double>(b), f.seconds) : 0.0);
    }
    if (f.bytes == 0 || f.seconds <= 0)
        throw insane_figure(fmt::format("{}: no bytes arrived in the {:.3g} s the point ran", direction, f.seconds));
    f.gbit_per_s = gbit_per_s(static_cast<double>(f.bytes), f.seconds);
    f.msg_per_s = static_cast<double>(f.bytes) / static_cast<double>(size_bytes) / f.seconds;
    f.interval_min_gbit = f.interval_max_gbit = f.gbit_per_s;
    return f;
}

flow_tracker flow_tracker::without_streams(const std::vector<bool>& dropped) const {
    flow_tracker out(streams_, warmup_s_);
    std::vector<std::uint64_t> kept(streams_);
    for (std::size_t k = 0; k < times_.size(); ++k) {
        for (std::size_t s = 0; s < streams_; ++s) kept[s] = s < dropped.size() && dropped[s] ? 0 : bytes_[k][s];
        out.add(times_[k], kept);
    }
    return out;
}

flow_figures fixed_count_figures(const std::string& direction, std::uint64_t size_bytes,
                                 std::span<const std::uint64_t> measured, std::span<const std::int64_t> begin_ns,
                                 std::span<const std::int64_t> end_ns) {
    if (measured.empty() || begin_ns.size() != measured.size() || end_ns.size() != measured.size())
        throw insane_figure(fmt::format("{}: incomplete stream reports", direction));
    const auto t0 = *std::min_element(begin_ns.begin(), begin_ns.end());
    const auto t1 = *std::max_element(end_ns.begin(), end_ns.end());
    if (t0 <= 0 || t1 <= t0) throw insane_figure(fmt::format("{}: the measured window is empty", direction));
    flow_figures f;
    f.direction = direction;
    f.seconds = seconds_from_ns(static_cast<double>(t1 - t0));
    for (std::size_t s = 0; s < measured.size(); ++s) {
        if (__builtin_add_overflow(f.bytes, measured[s], &f.bytes))
            throw insane_figure(fmt::format("{}: the streams' byte counts overflow 64 bits", direction));
        // Every begin is > 0 (t0 > 0), so end - begin cannot overflow once end > begin; a
        // stream whose window is empty or inverted (the peer's figures) counts as 0 Gbit/s.
        const double secs = end_ns[s] > begin_ns[s] ? seconds_from_ns(static_cast<double>(end_ns[s] - begin_ns[s])) : 0.0;
        f.stream_gbit_per_s.push_back(secs > 0 ? gbit_per_s(static_cast<double>(measured[s]), secs) : 0.0);
    }
    if (f.bytes == 0) throw insane_figure(fmt::format("{}: no bytes arrived in the measured window", direction));
    f.gbit_per_s = gbit_per_s(static_cast<double>(f.bytes), f.seconds);
    f.msg_per_s = static_cast<double>(f.bytes) / static_cast<double>(size_bytes) / f.seconds;
    f.interval_min_gbit = *std::min_element(f.stream_gbit_per_s.begin(), f.stream_gbit_per_s.end());
    f.interval_max_gbit = *std::max_element(f.stream_gbit_per_s.begin(), f.stream_gbit_per_s.end());
    return f;
}

}  // namespace meshperf::core
