#pragma once
/// When a periodic job of the daemon runs (scheduled probes, scheduled inspections): slots
/// every `interval` from a first one that comes within `jitter` of the start (at once when
/// jitter is 0), each run at its slot shifted by a random offset within ±jitter, so a
/// cluster's daemons do not all act in the same second. Slots advance by whole intervals
/// from the first, so the offsets never add up into a drift, and slots a run outlasted are
/// passed over. Not thread-safe: one owner.
#include <chrono>
#include <random>

namespace meshperf::daemon {

class jittered_slots {
public:
    using clock = std::chrono::steady_clock;

    /// `interval_s` > 0 and 0 <= `jitter_s` (checked by the configuration); `rng` must
    /// outlive this.
    jittered_slots(double interval_s, double jitter_s, std::mt19937_64& rng, clock::time_point now);

    /// When the run is due.
    clock::time_point due() const { return due_; }

    /// After the run due now: moves to the first slot after `now`, jittered, never before now.
    void advance(clock::time_point now);

private:
    clock::duration offset(bool symmetric);

    clock::duration interval_;
    double jitter_s_;
    std::mt19937_64* rng_;
    clock::time_point slot_;  ///< unjittered: advances by whole intervals
    clock::time_point due_;   ///< slot_ ± jitter
};

}  // namespace meshperf::daemon
