#pragma once
/// The matrix's progress display, one phase (rounds, retest rounds, localisation rounds) at a time.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>

namespace meshperf::client {

/// The progress display of one phase: on a terminal one line rewritten in place; with
/// --progress in a log, a plain line per event. Both with the share of this phase done and
/// the time left. Jobs may end on any thread.
class phase_progress {
public:
    /// `quiet`: -q (no display on a terminal); `progress`: --progress (plain lines when
    /// stderr is not a terminal).
    phase_progress(bool quiet, bool progress);
    /// Starts step k (1-based) of `of` with `total` jobs; k == 1 starts the phase's clock.
    void start(const char* what, std::size_t k, std::size_t of, std::size_t total);
    /// One job of the step ended.
    void job_done();
    /// What the jobs are called in the line: "pairs" (the default) or "links".
    void set_unit(const char* unit) { unit_ = unit; }
    /// Clears the terminal's line.
    void end() const;

private:
    void show();

    const char* unit_ = "pairs";  // what the jobs are: pairs (full), links (triage)
    bool tty_ = false, log_ = false;
    std::mutex m_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    const char* what_ = "";
    std::size_t k_ = 0, of_ = 0, total_ = 0;
    std::atomic<std::size_t> done_{0};
};

}  // namespace meshperf::client
