#include "daemon/runs/jittered_slots.hpp"

namespace meshperf::daemon {

jittered_slots::jittered_slots(double interval_s, double jitter_s, std::mt19937_64& rng, clock::time_point now)
    : interval_(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval_s))),
      jitter_s_(jitter_s), rng_(&rng) {
    slot_ = now + offset(false);
    due_ = slot_;
}

jittered_slots::clock::duration jittered_slots::offset(bool symmetric) {
    if (jitter_s_ <= 0) return clock::duration::zero();
    std::uniform_real_distribution<double> d(symmetric ? -jitter_s_ : 0.0, jitter_s_);
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(d(*rng_)));
}

void jittered_slots::advance(clock::time_point now) {
    do slot_ += interval_;
    while (slot_ <= now);
    due_ = slot_ + offset(true);
    if (due_ <= now) due_ = slot_;
}

}  // namespace meshperf::daemon
