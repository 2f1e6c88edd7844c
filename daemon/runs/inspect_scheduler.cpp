#include "daemon/runs/inspect_scheduler.hpp"

#include "daemon/runs/jittered_slots.hpp"
#include "daemon/runs/node_inspection.hpp"
#include "daemon/runs/run_manager.hpp"
#include "daemon/runtime/inspect_metrics.hpp"
#include "daemon/runtime/inspection_state.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/runtime/metrics.hpp"

namespace meshperf::daemon {

inspect_scheduler::inspect_scheduler(daemon_context& ctx, const run_manager& runs, std::optional<node::node_manifest> expect,
                                     std::string control_address)
    : ctx_(ctx), runs_(runs), expect_(std::move(expect)), control_address_(std::move(control_address)) {
    if (!ctx_.inspections || !ctx_.inspections->schedule().enabled()) return;
    const auto& c = ctx_.inspections->schedule();
    log_info("inspect: inspecting this node every {} s ± {} s{}{}", c.interval_s, c.jitter_s,
             c.loopback ? ", with the RDMA loopback when idle" : "", c.manifest.empty() ? "" : ", against " + c.manifest);
    thread_ = std::thread([this] { loop(); });
}

inspect_scheduler::~inspect_scheduler() {
    {
        std::lock_guard lock(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void inspect_scheduler::inspect_once() {
    const auto& c = ctx_.inspections->schedule();
    node_inspection_request req;
    req.expect = expect_;
    req.loopback = c.loopback;
    req.control_address = control_address_;
    req.who = "scheduled inspection (loopback)";
    const auto started = clock::now();
    const auto result = inspect_node(ctx_, req, &runs_);
    const double took_s = std::chrono::duration<double>(clock::now() - started).count();
    auto doc = node::to_json(result);
    const auto now = std::chrono::system_clock::now();
    if (ctx_.metrics) {
        try {
            ctx_.metrics->record_inspection(inspection_exposition(doc, std::chrono::duration<double>(now.time_since_epoch()).count()));
        } catch (const std::exception& e) {  // a label the exposition refuses: keep the old series, say why
            log_warn("inspect: the inspection's series are not exported: {}", e.what());
        }
    }
    const auto state = doc.value("state", std::string("UNKNOWN"));
    const auto summary = doc.value("summary", std::string());
    ctx_.inspections->record({std::move(doc), now, took_s});
    if (state != last_state_) {
        if (state == "OK") log_info("inspect: {} ({:.3f} s)", summary, took_s);
        else log_warn("inspect: {} ({:.3f} s)", summary, took_s);
        last_state_ = state;
    } else {
        log_debug("inspect: {} ({:.3f} s)", summary, took_s);
    }
}

void inspect_scheduler::loop() {
    const auto& c = ctx_.inspections->schedule();
    std::unique_lock lock(m_);
    jittered_slots when(c.interval_s, c.jitter_s, rng_, clock::now());
    while (!stopping_) {
        if (cv_.wait_until(lock, when.due(), [&] { return stopping_; })) break;
        lock.unlock();
        try {
            inspect_once();
        } catch (const std::exception& e) {  // inspect_node does not throw; recording might (memory)
            log_error("inspect: scheduled inspection failed: {}", e.what());
        }
        lock.lock();
        when.advance(clock::now());  // slots this inspection outlasted are passed over
    }
}

}  // namespace meshperf::daemon
