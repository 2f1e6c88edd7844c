#pragma once
/// Scheduled probes ([schedule] of the configuration): every `interval`, shifted by a random
/// offset within ±`jitter` so a cluster's daemons do not all probe in the same second, this
/// daemon submits one run per peer and transport through run_manager::submit. The runs are
/// queued, stored and exported on /metrics like any other.
///
/// Bounded: a probe is skipped (and logged) while the previous probe of the same peer and
/// transport is still queued or running, so a slow or dead peer never piles up runs.
#include "daemon/runtime/config.hpp"
#include "daemon/runs/jittered_slots.hpp"
#include "daemon/runs/run_manager.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace meshperf::daemon {

class probe_scheduler {
public:
    using clock = std::chrono::steady_clock;

    /// Starts the scheduler thread when `config` lists peers; otherwise does nothing.
    /// Transports this daemon cannot use (rdma without devices) are dropped with a logged
    /// reason. The first probe of each peer comes within `jitter` of the start (at once
    /// when jitter is 0), the next ones every interval ± jitter after it.
    probe_scheduler(const probe_config& config, run_manager& runs);
    /// Stops the thread; queued probe runs stay with the run manager.
    ~probe_scheduler();
    probe_scheduler(const probe_scheduler&) = delete;
    probe_scheduler& operator=(const probe_scheduler&) = delete;

    /// Probes submitted and skipped so far (for tests and logs).
    std::size_t submitted() const;
    std::size_t skipped() const;

    /// The run spec of one probe (validated at configuration time).
    static core::run_spec probe_spec(const probe_config& config, const std::string& peer, const std::string& transport);

private:
    struct target {
        std::string peer;
        std::string transport;
        jittered_slots when;
        std::shared_ptr<run_record> last;
    };
    void loop();

    probe_config config_;
    run_manager& runs_;
    std::vector<target> targets_;
    std::mt19937_64 rng_{std::random_device{}()};
    mutable std::mutex m_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::size_t submitted_ = 0, skipped_ = 0;
    std::thread thread_;
};

}  // namespace meshperf::daemon
