#pragma once
/// The daemon's own inspections of its node (config [inspect]): the latest scheduled one,
/// kept in memory for GET /v1/inspect/last, and the lock that lets one inspection of this
/// node run at a time, scheduled or asked for (daemon/runs/node_inspection.hpp takes it).
/// Owned by main; daemon_context::inspections points to it. Thread-safe.
#include "daemon/runtime/config.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

namespace meshperf::daemon {

class inspection_state {
public:
    /// One finished inspection.
    struct snapshot {
        nlohmann::json document;                      ///< node/inspect.hpp to_json
        std::chrono::system_clock::time_point at{};   ///< when it ended
        double duration_s = 0;                        ///< how long it took, loopback included
    };

    /// `schedule`: the configuration's [inspect] (interval 0: nothing is scheduled).
    explicit inspection_state(inspect_config schedule = {}) : schedule_(std::move(schedule)) {}
    inspection_state(const inspection_state&) = delete;
    inspection_state& operator=(const inspection_state&) = delete;

    const inspect_config& schedule() const { return schedule_; }

    /// Held while inspecting, so two inspections never run at once. Blocks for at most the
    /// one running (milliseconds; about 0.5 s per RDMA device with the loopback).
    std::unique_lock<std::mutex> exclusive() { return std::unique_lock(running_); }

    /// Keeps a scheduled inspection as the latest.
    void record(snapshot s);
    /// The latest scheduled inspection; nullopt before the first.
    std::optional<snapshot> last() const;
    /// Scheduled inspections recorded so far.
    std::uint64_t count() const;

private:
    const inspect_config schedule_;
    std::mutex running_;
    mutable std::mutex m_;
    std::optional<snapshot> last_;
    std::uint64_t count_ = 0;
};

}  // namespace meshperf::daemon
