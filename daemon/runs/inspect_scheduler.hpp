#pragma once
/// Scheduled inspections ([inspect] of the configuration): every `interval`, shifted by a
/// random offset within ±`jitter` (the first within `jitter` of the start) so a cluster's
/// daemons do not all read their PCIe trees in the same second, this daemon inspects its
/// own node (node_inspection.hpp) on its own thread, keeps the result in ctx.inspections
/// (GET /v1/inspect/last) and hands its series to ctx.metrics (GET /metrics).
///
/// One at a time: an inspection that outlasts its interval makes the next slots pass, never
/// two run at once. The loopback ([inspect] loopback) is never queued behind a run nor makes
/// one wait: while the daemon measures or runs wait, it is reported as not measured.
#include "daemon/runtime/context.hpp"
#include "node/manifest.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

namespace meshperf::daemon {

class run_manager;

class inspect_scheduler {
public:
    using clock = std::chrono::steady_clock;

    /// Starts the scheduler thread when ctx.inspections is set and its schedule is enabled;
    /// otherwise does nothing. `expect`: the [inspect] manifest, read at start (main.cpp);
    /// `control_address`: the API's listening address (its interface is not a rail). `ctx`
    /// and `runs` must outlive the scheduler.
    inspect_scheduler(daemon_context& ctx, const run_manager& runs, std::optional<node::node_manifest> expect,
                      std::string control_address);
    /// Stops the thread, after the inspection running now, if any (milliseconds; with the
    /// loopback about 0.5 s per RDMA device).
    ~inspect_scheduler();
    inspect_scheduler(const inspect_scheduler&) = delete;
    inspect_scheduler& operator=(const inspect_scheduler&) = delete;

private:
    void loop();
    void inspect_once();

    daemon_context& ctx_;
    const run_manager& runs_;
    std::optional<node::node_manifest> expect_;
    std::string control_address_;
    std::string last_state_;  // the previous verdict, to log changes only (scheduler thread)
    std::mt19937_64 rng_{std::random_device{}()};
    std::mutex m_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace meshperf::daemon
