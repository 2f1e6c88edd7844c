#include "client/collective/run.hpp"

#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

core::collective_result read_collective(const json& doc) {
    try {
        return core::collective_result_from_json(doc);
    } catch (const std::exception& e) {
        throw client_error(exit_unreachable,
                           fmt::format("a collective result this meshperf cannot read: {}", e.what()));
    }
}

collective_outcome run_collective(const core::collective_spec& spec, const credentials& creds,
                                  const std::function<void(const json&)>& on_event) {
    const daemon_client coordinator(std::string(core::coordinator_of(spec)), creds);
    collective_outcome out;
    out.doc = coordinator.collective_streaming(core::to_json(spec), [&](const json& ev) {
        if (on_event) on_event(ev);
    });
    out.run = read_collective(out.doc);
    return out;
}

bool failed_at_start(const core::collective_result& run) { return run.state == core::run_state::failed && run.failed_at_start; }

int collective_exit_code(const core::collective_result& run) {
    if (run.state == core::run_state::completed) return exit_ok;
    return failed_at_start(run) ? exit_unreachable : exit_run_failed;
}

}  // namespace meshperf::client
