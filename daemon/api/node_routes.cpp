#include "daemon/api/node_routes.hpp"

#include "core/error.hpp"
#include "daemon/runs/node_inspection.hpp"
#include "daemon/runtime/inspect_metrics.hpp"
#include "daemon/runtime/inspection_state.hpp"
#include "daemon/runtime/metrics.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <mutex>

namespace meshperf::daemon {

using nlohmann::json;

json node_info(const api_state& s, const json& gpus) {
    // /v1/info is polled (matrix probes, dashboards) and its interface scan takes seconds on a
    // node with 10,000 veths: it runs on the worker pool, at most once a
    // second, and by one worker at a time; a caller that finds a scan under way takes the
    // previous answer instead of waiting for it.
    static std::mutex m;
    static const daemon_context* cached_for = nullptr;
    static std::filesystem::path cached_root;
    static std::chrono::steady_clock::time_point cached_at;
    static bool scanning = false;
    static json cached;
    {
        std::lock_guard lock(m);
        const bool same = cached_for == &s.ctx && cached_root == s.ctx.sysfs_root;
        if (same && std::chrono::steady_clock::now() - cached_at <= std::chrono::seconds(1)) return cached;
        if (same && scanning) return cached;
        scanning = true;
    }
    json fresh;
    try {
        const auto inv = read_node_inventory(s.ctx, s.listening.address, gpus);
        fresh = {{"rails", node::rails_json(inv)}, {"gpu_rail_pairs", node::pairing_json(inv)}};
    } catch (...) {
        std::lock_guard lock(m);
        scanning = false;
        throw;
    }
    std::lock_guard lock(m);
    scanning = false;
    cached = std::move(fresh);
    cached_for = &s.ctx;
    cached_root = s.ctx.sysfs_root;
    cached_at = std::chrono::steady_clock::now();
    return cached;
}

namespace {

/// Inspections asked over the API at once (40 at once took 1.1 GB and
/// the worker pool): one runs, the others are refused with Retry-After.
std::atomic<int> api_inspections{0};

}  // namespace

std::shared_ptr<void> take_inspection_slot() {
    if (api_inspections.fetch_add(1) >= max_api_inspections) {
        api_inspections.fetch_sub(1);
        return nullptr;
    }
    // Not null (a null shared_ptr reads as "no place"): it points at the count it gives back to.
    return std::shared_ptr<void>(&api_inspections, [](void*) { api_inspections.fetch_sub(1); });
}

api_reply inspection_busy_reply() {
    auto r = api_error(503, fmt::format("this daemon is already inspecting its node for another client (at most {} at once): "
                                        "retry in {} s, or read the last scheduled inspection at GET /v1/inspect/last",
                                        max_api_inspections, inspection_retry_after_s));
    r.body["retry_after_s"] = inspection_retry_after_s;
    r.retry_after_s = inspection_retry_after_s;
    return r;
}

api_reply handle_inspect(const api_state& s, const std::string& body, bool post, std::function<bool()> abandoned) {
    node_inspection_request req;
    req.control_address = s.listening.address;
    req.abandoned = std::move(abandoned);
    if (post && !body.empty()) {
        const auto j = json::parse(body, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return api_error(400, "the request body is not a JSON object: send {\"expect\": {\"gpus\": 8, \"rails\": 8}, "
                                  "\"loopback\": true, \"gpu_copies\": true} or nothing");
        for (const auto& [key, _] : j.items())
            if (key != "expect" && key != "loopback" && key != "gpu_copies")
                return api_error(400, fmt::format("unknown key '{}' (known: expect, loopback, gpu_copies)", key));
        for (const auto& [key, flag] : {std::pair{"loopback", &req.loopback}, std::pair{"gpu_copies", &req.gpu_copies}})
            if (j.contains(key)) {
                if (!j[key].is_boolean()) return api_error(400, fmt::format("'{}' must be true or false", key));
                *flag = j[key].get<bool>();
            }
        if (j.contains("expect")) {
            try {
                req.expect = node::manifest_from_json(j["expect"]);
            } catch (const core::spec_error& e) {
                return api_error(400, e.what());
            }
        }
    }
    const auto result = inspect_node(s.ctx, req, &s.runs);
    if (was_abandoned(result)) return api_error(503, "the inspection stopped: its client left");  // nobody reads it
    auto doc = node::to_json(result);
    // With scheduled inspections, /metrics carries theirs: the same manifest and loopback
    // every time, so an engineer's ad-hoc manifest never sets off an alert.
    const bool scheduled = s.ctx.inspections && s.ctx.inspections->schedule().enabled();
    if (s.ctx.metrics && !scheduled) {
        const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        s.ctx.metrics->record_inspection(inspection_exposition(doc, now));
    }
    return {200, std::move(doc)};
}

api_reply handle_inspect_last(const api_state& s) {
    const auto* state = s.ctx.inspections;
    if (!state || !state->schedule().enabled())
        return api_error(404, "this daemon does not inspect its node on a schedule ([inspect] interval = 0 in its "
                              "configuration): GET /v1/inspect inspects it now");
    const auto last = state->last();
    if (!last)
        return api_error(404, fmt::format("no scheduled inspection yet: the first comes within {} s of the daemon's start "
                                          "([inspect] jitter); GET /v1/inspect inspects the node now",
                                          state->schedule().jitter_s));
    const auto& c = state->schedule();
    auto doc = last->document;
    const auto age = std::chrono::duration<double>(std::chrono::system_clock::now() - last->at).count();
    doc["inspected_at"] = fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(last->at)));
    doc["unix_seconds"] = std::chrono::duration<double>(last->at.time_since_epoch()).count();
    doc["age_s"] = std::round(std::max(0.0, age) * 1000) / 1000;
    doc["duration_s"] = last->duration_s;
    doc["inspections"] = state->count();
    doc["schedule"] = {{"interval_s", c.interval_s},
                       {"jitter_s", c.jitter_s},
                       {"loopback", c.loopback},
                       {"manifest", c.manifest.empty() ? json() : json(c.manifest)}};
    return {200, std::move(doc)};
}

}  // namespace meshperf::daemon
