#pragma once
/// The link counters of a point read inside its window too, at interval boundaries: which
/// counters that should not move rose, in how many intervals, by how much at most in one,
/// and how soon (docs/counters.md, "Inside a point"). A burst of errors and a steady trickle
/// have the same delta; the spread tells them apart, and when it happened lines up with
/// the point's interval rates. Pure: transport/link_counters_reader.hpp takes the readings.
#include "core/link_counters.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::core {

/// How often a point's link counters are read inside its window: a few readings a second,
/// outside the data path (the controlling thread's tick), so a directory of 100 counters
/// costs well under a millisecond a second.
inline constexpr std::chrono::milliseconds link_counter_interval{250};

/// Follows one directory's counters across the window's readings, from the one just before
/// it opens to the one after it closes.
class counter_interval_tracker {
public:
    /// Starts over with the reading just before the window (a later call starts over again).
    void start(const counter_values& first);
    /// The next reading, `at_s` seconds after the first; ignored before start().
    void add(const counter_values& reading, double at_s);
    /// Intervals between the readings so far (0 before a second reading).
    std::uint64_t intervals() const noexcept { return intervals_; }
    /// Puts what the readings showed into `group`, whose deltas are from the first reading
    /// to the last: the spread of each counter that is not traffic and rose; a counter that
    /// went down between two readings becomes a reset there (its delta dropped), though it
    /// may have climbed back above its first value by the end.
    void apply(counter_group_delta& group) const;

private:
    std::optional<counter_values> last_;
    std::uint64_t intervals_ = 0;
    std::map<std::string, counter_interval_spread> spread_;
    std::vector<std::string> went_down_;
};

}  // namespace meshperf::core
