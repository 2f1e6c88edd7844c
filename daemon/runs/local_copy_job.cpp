#include "daemon/runs/local_copy_job.hpp"

#include "daemon/runtime/log.hpp"

#include <condition_variable>
#include <fmt/format.h>
#include <thread>

namespace meshperf::daemon {
namespace {

/// {"error": message} with `status`, as the API's other errors (api_error).
local_copy_reply copy_error(int status, const std::string& message) { return {status, {{"error", message}}}; }

}  // namespace

std::shared_ptr<local_copy_job> local_copy_job::start(measurement_gate& gate, const std::string& who, sweep_fn sweep,
                                                      std::chrono::milliseconds time_cap, std::string& holder) {
    auto lease = gate.try_acquire(who, holder);
    if (!lease) return nullptr;
    auto job = std::make_shared<local_copy_job>();
    // Detached: the client may go away; the job (shared) and the gate (the daemon's) outlive
    // it, and the thread ends by itself within the time cap. Should the thread not start,
    // the lease is destroyed with the lambda and the gate is free again.
    std::thread([job, lease = std::move(lease), who, sweep = std::move(sweep), time_cap]() mutable {
        local_copy_reply r;
        {
            std::stop_source cap;
            // Fires the cap unless the sweep ends first (destruction stops and joins it).
            std::jthread timer([&cap, time_cap](std::stop_token ended) {
                std::mutex m;
                std::condition_variable_any cv;
                std::unique_lock lock(m);
                cv.wait_for(lock, ended, time_cap, [] { return false; });
                if (!ended.stop_requested()) cap.request_stop();
            });
            try {
                r = {200, sweep(cap.get_token())};
            } catch (const std::exception& e) {
                r = copy_error(500, fmt::format("the copy sweep failed: {}", e.what()));
                log_warn("{} failed: {}", who, e.what());
            } catch (...) {
                r = copy_error(500, "the copy sweep failed with an unknown error");
            }
        }
        lease.release();
        std::lock_guard lock(job->m_);
        job->reply_ = std::move(r);
        job->done_ = true;
    }).detach();
    return job;
}

bool local_copy_job::done() const {
    std::lock_guard lock(m_);
    return done_;
}

local_copy_reply local_copy_job::reply() const {
    std::lock_guard lock(m_);
    if (!done_) return copy_error(500, "the copy sweep is still running");
    return reply_;
}

local_copy_reply local_copy_busy_reply(const std::string& holder) {
    auto r = copy_error(503, fmt::format("this meshperfd is measuring ({}): a copy sweep waits for the measurement to end; "
                                        "retry in {} s",
                                        holder, local_copy_busy_retry_after_s));
    r.body["retry_after_s"] = local_copy_busy_retry_after_s;
    r.retry_after_s = local_copy_busy_retry_after_s;
    return r;
}

}  // namespace meshperf::daemon
