#pragma once
/// What differs between the two kinds of run the run manager executes, a sweep
/// (core::run_result, daemon/sweep/initiator) and a collective (core::collective_result,
/// daemon/collective/coordinator): one overload of each function per kind, so that the
/// manager's one run path (run_manager::run) never asks which kind it runs. All are called
/// on the executor thread.
#include "core/collective/result.hpp"
#include "core/result.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/session/session_protocol.hpp"

#include <atomic>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

namespace meshperf::daemon {

/// Every kind of result a run record holds.
using any_run_result = std::variant<core::run_result, core::collective_result>;

/// What the log says when the run starts: "starting against HOST:PORT", "collective over N
/// ranks starting".
std::string starting_words(const core::run_result& run);
std::string starting_words(const core::collective_result& run);

/// Measures the run: fills `run` as it goes (its peer or hosts, its points, warnings) and
/// emits its events ("started", "point", progress). Throws when the run fails, and
/// run_cancelled when `cancel` stops it. A sweep's peer is first checked against this
/// daemon's peer policy; each kind finds its transport's plug-ins in the registry.
void measure(daemon_context& ctx, core::run_result& run, const event_sink& emit, const std::atomic<bool>& cancel);
void measure(daemon_context& ctx, core::collective_result& run, const event_sink& emit, const std::atomic<bool>& cancel);

/// Takes a "started" or "point" event into `shown`, the copy of the run that readers of the
/// record see; `run` is the run as measured so far. A sweep reads the peer and the point from
/// the event; a collective copies its hosts and points from `run`. Throws spec_error for a
/// point that cannot be read.
void take_event(core::run_result& shown, const core::run_result& run, const nlohmann::json& event);
void take_event(core::collective_result& shown, const core::collective_result& run, const nlohmann::json& event);

/// Adds to a failed run what its failure says beyond its message: a collective_run_error's
/// failed rank and whether it failed at the start. Nothing for a sweep.
void note_failure(core::run_result& run, const std::exception& failure);
void note_failure(core::collective_result& run, const std::exception& failure);

}  // namespace meshperf::daemon
