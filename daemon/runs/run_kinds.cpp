#include "daemon/runs/run_kinds.hpp"

#include "daemon/collective/coordinator.hpp"
#include "daemon/collective/run_error.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/sweep/initiator.hpp"
#include "daemon/transports/registry.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

std::string starting_words(const core::run_result& run) { return fmt::format("starting against {}", run.spec.peer); }

std::string starting_words(const core::collective_result& run) {
    return fmt::format("collective over {} ranks starting", run.spec.hosts.size());
}

void measure(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel) {
    check_run_target(ctx, run.spec.peer);
    execute_run(ctx, run, emit, cancel, find_sweep_plugins);
}

void measure(daemon_context& ctx, core::collective_result& run, const event_sink& emit, const std::atomic<bool>& cancel) {
    execute_collective(ctx, run, emit, cancel, find_collective_plugin);
}

void take_event(core::run_result& shown, const core::run_result&, const nlohmann::json& event) {
    const auto kind = event.value("event", "");
    if (kind == "started") shown.peer = core::host_info_from_json(event["peer"]);
    if (kind == "point") shown.points.push_back(core::point_result_from_json(event["point"]));
}

void take_event(core::collective_result& shown, const core::collective_result& run, const nlohmann::json& event) {
    const auto kind = event.value("event", "");
    if (kind == "started") shown.hosts = run.hosts;
    if (kind == "point") shown.points = run.points;
}

void note_failure(core::run_result&, const std::exception&) {}

void note_failure(core::collective_result& run, const std::exception& failure) {
    if (const auto* e = dynamic_cast<const collective_run_error*>(&failure)) {
        run.failed_rank = e->failed_rank;
        run.failed_at_start = e->failed_at_start;
    }
}

}  // namespace meshperf::daemon
