#pragma once
/// A copy sweep of POST /v1/local running on its own thread (it lasts seconds to minutes, and
/// the HTTP server has one I/O thread), holding the measurement gate so that no network
/// measurement runs beside it, and stopped at a time cap. Knows nothing of GPUs: the sweep
/// is a function (daemon/api/local_copy_route.cpp passes gpu::run_local_sweep), and no HTTP:
/// its answer is a local_copy_reply, which the API writes as it is.
#include "daemon/runtime/measurement_gate.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

namespace meshperf::daemon {

/// Longest a copy sweep may run on a daemon (also bounded by limits.max_run_s). At the cap
/// the sweep stops between sizes and answers what it measured, marked "stopped".
inline constexpr std::chrono::seconds local_copy_time_cap{600};
/// Seconds a client is told to wait (Retry-After) when the daemon is measuring.
inline constexpr int local_copy_busy_retry_after_s = 5;

/// The answer to POST /v1/local: a status, a JSON body, and a Retry-After when positive.
struct local_copy_reply {
    int status = 200;
    nlohmann::json body;
    int retry_after_s = 0;  ///< > 0: sent as a Retry-After header (503 busy)
};

class local_copy_job {
public:
    /// The sweep: returns the result document, or throws (what() becomes the 500 answer). The
    /// token is stopped at the time cap; the sweep should then return what it has. Runs on
    /// the job's thread.
    using sweep_fn = std::function<nlohmann::json(std::stop_token)>;

    /// Takes `gate` as `who` and starts `sweep` on a new (detached) thread, which releases the
    /// gate when the sweep ends, however it ends. Returns null when the gate is taken, with
    /// its holder's description in `holder`; nothing runs then.
    static std::shared_ptr<local_copy_job> start(measurement_gate& gate, const std::string& who, sweep_fn sweep,
                                                 std::chrono::milliseconds time_cap, std::string& holder);

    /// The sweep has ended (the reply is ready). Any thread.
    bool done() const;
    /// 200 with the sweep's document, or 500 {"error": "the copy sweep failed: ..."}. Valid
    /// once done(); before, a 500 saying it is still running. Any thread.
    local_copy_reply reply() const;

private:
    mutable std::mutex m_;
    bool done_ = false;
    local_copy_reply reply_;
};

/// The 503 for a busy daemon: {"error": "this meshperfd is measuring (HOLDER): ...",
/// "retry_after_s": N} with Retry-After: N.
local_copy_reply local_copy_busy_reply(const std::string& holder);

}  // namespace meshperf::daemon
