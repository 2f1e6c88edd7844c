#pragma once
/// Running one collective from the client, for `collective` and `check --collective`: the
/// spec goes to its coordinator (POST /v1/collectives, streamed), the events go to the
/// caller, and the result document comes back read; then the exit code the run ends with.
#include "client/support/daemon_client.hpp"
#include "core/collective/result.hpp"

#include <functional>
#include <nlohmann/json.hpp>

namespace meshperf::client {

/// A finished collective as the coordinator returned it.
struct collective_outcome {
    nlohmann::json doc;            ///< the result document as returned
    core::collective_result run;   ///< read from doc
};

/// Submits `spec` to coordinator_of(spec) and follows the event stream to its result;
/// `on_event` (may be empty) sees every event. Throws client_error: exit_unreachable when the
/// coordinator cannot be reached or returns a document this meshperf cannot read, exit_usage
/// when it refuses the spec (400), exit_run_failed when it is busy (503).
collective_outcome run_collective(const core::collective_spec& spec, const credentials& creds,
                                  const std::function<void(const nlohmann::json&)>& on_event);

/// Reads a collective result document; one this meshperf cannot read is exit_unreachable
/// (a daemon answered nonsense), naming what is wrong.
core::collective_result read_collective(const nlohmann::json& doc);

/// Whether the run failed before it measured anything because a rank could not join it
/// (unreachable, refused the plan): the coordinator's failed_at_start.
bool failed_at_start(const core::collective_result& run);

/// 0 completed; 3 failed at the start (failed_at_start); 1 failed or cancelled mid-way.
int collective_exit_code(const core::collective_result& run);

}  // namespace meshperf::client
