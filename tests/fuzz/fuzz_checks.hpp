#pragma once
/// What the fuzz targets share: the outcomes a handler of untrusted input may have, and the
/// run-spec body check of POST /v1/runs (used by run_spec_json and http_request).
#include "core/collective/plan.hpp"
#include "core/collective/spec.hpp"
#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "transport/socket.hpp"

#include <cstdlib>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

namespace meshperf::fuzz {

/// Stops the fuzzer with a message: a property that must hold does not. libFuzzer saves the
/// input as crash-<sha1>.
[[noreturn]] inline void property_failed(const char* what) {
    std::fprintf(stderr, "fuzz property failed: %s\n", what);
    std::abort();
}

/// What handle_submit (daemon/api/api_routes.cpp) does with a POST /v1/runs body: JSON, then
/// run_spec_from_json under the daemon's limits, then the peer address. spec_error is the
/// only outcome allowed for bad input (the daemon answers 400 with its message); anything
/// else escaping is a bug. A spec that is accepted must also be accepted by the peer, which
/// reads to_json(spec) from the hello message, and must read back identical.
inline void check_run_spec_body(std::string_view body, const core::run_limits& limits = {}) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) return;
    core::run_spec spec;
    try {
        spec = core::run_spec_from_json(j, limits);
        transport::parse_endpoint(spec.peer);
    } catch (const core::spec_error&) {
        return;
    }
    const auto wire = core::to_json(spec);
    core::run_spec again;
    try {
        again = core::run_spec_from_json(nlohmann::json::parse(wire.dump()), limits);
    } catch (const core::spec_error&) {
        property_failed("the peer would refuse a spec this daemon accepted (to_json -> run_spec_from_json)");
    }
    if (core::to_json(again) != wire) property_failed("run spec does not read back identical from its JSON form");
}

/// What handle_submit_collective does with a POST /v1/collectives body, and what every rank
/// does with the plan in its hello: collective_spec_from_json under the daemon's limits, the
/// hosts normalized as the daemon normalizes them. spec_error is the only outcome allowed for
/// bad input; an accepted spec must read back identical from its JSON form (every rank reads
/// that), and the plan of every rank must be buildable for every op and size.
inline void check_collective_spec_body(std::string_view body, const core::run_limits& limits = {}) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) return;
    auto normalize = [](std::string_view h) { return transport::parse_endpoint(h).to_string(); };
    core::collective_limits l;
    l.run = limits;
    core::collective_spec spec;
    try {
        spec = core::collective_spec_from_json(j, normalize, l);
    } catch (const core::spec_error&) {
        return;
    }
    const auto wire = core::to_json(spec);
    core::collective_spec again;
    try {
        again = core::collective_spec_from_json(nlohmann::json::parse(wire.dump()), normalize, l);
    } catch (const core::spec_error&) {
        property_failed("a rank would refuse a collective spec the coordinator accepted (to_json -> from_json)");
    }
    if (core::to_json(again) != wire) property_failed("collective spec does not read back identical from its JSON form");
    if (spec.hosts.size() > 8) return;  // the plans of a few ranks are enough, and fast
    const auto p = static_cast<unsigned>(spec.hosts.size());
    try {
        for (auto op : spec.ops)
            for (unsigned r = 0; r < p; ++r) (void)core::plan_collective(op, core::algo_for(spec, op), p, r, spec.element, spec.sizes.front());
    } catch (const core::spec_error&) {
        property_failed("a rank cannot build its plan for a collective spec the coordinator accepted");
    }
}

}  // namespace meshperf::fuzz
