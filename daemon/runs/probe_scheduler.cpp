#include "daemon/runs/probe_scheduler.hpp"

#include "daemon/runtime/log.hpp"
#include "daemon/transports/registry.hpp"

#include <algorithm>

namespace meshperf::daemon {

core::run_spec probe_scheduler::probe_spec(const probe_config& c, const std::string& peer, const std::string& transport) {
    core::run_spec s;
    s.peer = peer;
    s.transport = transport;
    s.tests = c.tests;
    s.sizes = c.sizes;
    s.local_memory = s.remote_memory = c.memory;
    s.max_point_s = c.point_duration_s;
    return s;
}

probe_scheduler::probe_scheduler(const probe_config& config, run_manager& runs) : config_(config), runs_(runs) {
    if (!config_.enabled()) return;
    std::vector<std::string> usable;
    for (const auto& t : config_.transports) {
        const auto reason = unavailable_reason(t);
        if (reason.empty()) {
            usable.push_back(t);
            continue;
        }
        for (const auto& peer : config_.peers) log_warn("schedule: not probing {} over {}: {}", peer, t, reason);
    }
    const auto now = clock::now();
    for (const auto& peer : config_.peers)
        for (const auto& t : usable) targets_.push_back({peer, t, jittered_slots(config_.interval_s, config_.jitter_s, rng_, now), nullptr});
    if (targets_.empty()) return;
    log_info("schedule: probing {} peer(s) every {} s ± {} s", config_.peers.size(), config_.interval_s, config_.jitter_s);
    thread_ = std::thread([this] { loop(); });
}

probe_scheduler::~probe_scheduler() {
    {
        std::lock_guard lock(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::size_t probe_scheduler::submitted() const {
    std::lock_guard lock(m_);
    return submitted_;
}

std::size_t probe_scheduler::skipped() const {
    std::lock_guard lock(m_);
    return skipped_;
}

void probe_scheduler::loop() {
    std::unique_lock lock(m_);
    while (!stopping_) {
        const auto now = clock::now();
        for (auto& t : targets_) {
            if (t.when.due() > now) continue;
            t.when.advance(now);
            const auto state = t.last ? t.last->state() : core::recorded_state();
            if (state.in_progress()) {
                ++skipped_;
                log_warn("schedule: probe of {} over {} skipped: the previous one ({}) is still {}", t.peer,
                         t.transport, t.last->id(), state.text());
                continue;
            }
            try {
                t.last = runs_.submit(probe_spec(config_, t.peer, t.transport));
                ++submitted_;
                log_debug("schedule: probe {} of {} over {}", t.last->id(), t.peer, t.transport);
            } catch (const std::exception& e) {
                log_warn("schedule: probe of {} not submitted: {}", t.peer, e.what());
            }
        }
        const auto next = std::min_element(targets_.begin(), targets_.end(), [](const target& a, const target& b) {
                              return a.when.due() < b.when.due();
                          })->when.due();
        cv_.wait_until(lock, next, [&] { return stopping_; });
    }
}

}  // namespace meshperf::daemon
