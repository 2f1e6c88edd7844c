#include "daemon/api/api_routes.hpp"

#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "core/collective/spec.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/collective/wire.hpp"
#include "daemon/transports/registry.hpp"
#include "daemon/session/run_placement.hpp"
#include "transport/socket.hpp"

#include <charconv>
#include <fmt/format.h>

namespace meshperf::daemon {

using nlohmann::json;

api_reply api_error(int status, const std::string& message) { return {status, {{"error", message}}}; }

std::string query_param(const std::string& query, const std::string& name) {
    std::size_t pos = 0;
    while (pos <= query.size()) {
        auto amp = query.find('&', pos);
        if (amp == std::string::npos) amp = query.size();
        const auto item = query.substr(pos, amp - pos);
        const auto eq = item.find('=');
        if (item.substr(0, eq) == name && eq != std::string::npos) {
            std::string out;
            const auto v = item.substr(eq + 1);
            for (std::size_t i = 0; i < v.size(); ++i) {
                if (v[i] == '+') out += ' ';
                else if (v[i] == '%' && i + 2 < v.size()) {
                    int c = 0;
                    auto [p, ec] = std::from_chars(v.data() + i + 1, v.data() + i + 3, c, 16);
                    if (ec == std::errc() && p == v.data() + i + 3) { out += static_cast<char>(c); i += 2; }
                    else out += v[i];
                } else out += v[i];
            }
            return out;
        }
        pos = amp + 1;
    }
    return {};
}

std::string peer_query_param(const std::string& query) {
    auto peer = query_param(query, "peer");
    if (peer.empty()) return peer;
    try {
        transport::parse_endpoint(peer);
    } catch (const core::spec_error& e) {
        throw core::spec_error(fmt::format("peer: {}", e.what()));
    }
    return peer;
}

api_reply handle_healthz(api_state& s) {
    api_reply r;
    // Alive and answering; a store that cannot be written is said, not failed on: the
    // daemon still measures and serves what it has.
    r.text = s.store.writable() ? "ok\n" : fmt::format("ok\nstore: {} ({} results waiting in memory)\n", s.store.status(), s.store.pending());
    r.content_type = "text/plain";
    return r;
}

namespace {

/// queue.measuring stays the gate holder's description ("run r-...", "session from ..."),
/// for people; measuring_run_id is the bare id of the run this daemon is measuring (null
/// when it is serving a session or idle), for scripts (meshperf cancel HOST ID).
json queue_json(const api_state& s) {
    const auto holder = s.ctx.gate.holder();
    json q{{"queued", s.runs.queued()}, {"measuring", holder}, {"measuring_run_id", nullptr}};
    for (const std::string_view prefix : {"run ", "collective run "}) {
        if (holder.rfind(prefix, 0) != 0 || holder.compare(prefix.size(), 2, "r-") != 0) continue;
        const auto rest = holder.substr(prefix.size());
        q["measuring_run_id"] = rest.substr(0, rest.find(' '));
    }
    return q;
}

}  // namespace

api_reply handle_info(api_state& s) {
    json info{{"host", core::to_json(s.ctx.host)},
             {"api", 1},
             {"limits",
              {{"max_streams", s.ctx.limits.max_streams},
               {"max_qps", s.ctx.limits.max_qps},
               {"max_iterations", s.ctx.limits.max_iterations},
               {"max_duration_s", s.ctx.limits.max_duration_s},
               {"max_run_s", s.ctx.limits.max_run_s},
               {"max_bytes_per_point", s.ctx.limits.max_bytes_per_point},
               {"max_queued_runs", s.ctx.limits.max_queued_runs},
               {"max_connections", s.ctx.limits.max_connections}}},
             {"queue", queue_json(s)},
             {"store", {{"path", s.store.path()}, {"writable", s.store.writable()}, {"status", s.store.status()},
                        {"pending", s.store.pending()}}},
             {"auth", !s.ctx.token.empty()},
             {"gpus", gpu_info()}};
    info.update(transports_info());  // "transports" and each transport's own fields ("rdma_devices")
    return {200, std::move(info)};
}

namespace {

/// Full queue: the client should come back when a run or two have gone through.
api_reply queue_full_reply(const api_state& s) {
    api_reply r = api_error(503, fmt::format("the run queue is full: {} runs are already waiting on this daemon "
                                             "(limits.max_queued_runs = {}); retry in {} s",
                                             s.ctx.limits.max_queued_runs, s.ctx.limits.max_queued_runs,
                                             queue_full_retry_after_s));
    r.body["retry_after_s"] = queue_full_retry_after_s;
    r.retry_after_s = queue_full_retry_after_s;
    return r;
}

}  // namespace

api_reply handle_submit(api_state& s, const std::string& body, std::shared_ptr<run_record>& record) {
    const auto j = json::parse(body, nullptr, false);
    if (j.is_discarded()) return api_error(400, "the request body is not valid JSON: send a run spec object such as {\"peer\": \"host:7470\"}");
    core::run_spec spec;
    try {
        spec = core::run_spec_from_json(j, s.ctx.limits);
        const auto peer = transport::parse_endpoint(spec.peer);
        if (const auto why = same_daemon_refusal(peer, s.listening)) return api_error(400, fmt::format("peer: {}", *why));
        check_placement_at_submission(spec, read_host_cpu_facts());
        check_spec_here(spec);
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    record = s.runs.submit(spec, s.ctx.limits.max_queued_runs);
    if (!record) return queue_full_reply(s);
    return {202, record->document()};
}

api_reply handle_submit_collective(api_state& s, const std::string& body, std::shared_ptr<run_record>& record) {
    const auto j = json::parse(body, nullptr, false);
    if (j.is_discarded())
        return api_error(400, "the request body is not valid JSON: send a collective spec object such as "
                              "{\"hosts\": [\"node1:7470\", \"node2:7470\"], \"ops\": \"allreduce\"}");
    core::collective_spec spec;
    try {
        spec = core::collective_spec_from_json(j, normalize_host, collective_limits_of(s.ctx.limits));
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    record = s.runs.submit(spec, s.ctx.limits.max_queued_runs);
    if (!record) return queue_full_reply(s);
    return {202, record->document()};
}

api_reply handle_get_run(api_state& s, const std::string& id, blocking_reply& offload) {
    if (auto r = s.runs.find(id)) return {200, r->document()};
    offload = [&store = s.store, id]() -> api_reply {
        try {
            auto doc = store.load(id);
            if (!doc) return api_error(404, fmt::format("no run '{}' on this daemon (list runs with GET /v1/runs)", id));
            if (store.is_pending(id)) mark_not_stored(*doc, store.status());
            return {200, std::move(*doc)};
        } catch (const store_read_error& e) {
            return api_error(500, e.what());
        }
    };
    return {};
}

api_reply handle_list_runs(api_state& s, const std::string& query, blocking_reply& offload) {
    run_list_query q;
    if (const auto l = query_param(query, "limit"); !l.empty()) {
        auto [p, ec] = std::from_chars(l.data(), l.data() + l.size(), q.limit);
        if (ec != std::errc() || p != l.data() + l.size() || q.limit == 0 || q.limit > max_run_list_limit)
            return api_error(400, fmt::format("limit '{}' is not a number in 1..{}: page through more runs with before=<the "
                                              "\"next\" of the previous page>",
                                              l, max_run_list_limit));
    }
    try {
        q.peer = peer_query_param(query);
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    q.before = query_param(query, "before");
    offload = [&store = s.store, q]() -> api_reply {
        try {
            auto page = store.list(q);
            return {200, {{"runs", std::move(page.runs)}, {"next", page.next.empty() ? json(nullptr) : json(page.next)}}};
        } catch (const std::invalid_argument& e) {
            return api_error(400, e.what());
        } catch (const store_read_error& e) {
            return api_error(500, e.what());
        }
    };
    return {};
}

api_reply handle_get_run(api_state& s, const std::string& id) {
    blocking_reply work;
    auto r = handle_get_run(s, id, work);
    return work ? work() : r;
}

api_reply handle_list_runs(api_state& s, const std::string& query) {
    blocking_reply work;
    auto r = handle_list_runs(s, query, work);
    return work ? work() : r;
}

api_reply handle_cancel_run(api_state& s, const std::string& id) {
    if (s.runs.cancel(id)) return {202, {{"id", id}, {"cancelling", true}}};
    bool known = s.runs.find(id) != nullptr;
    try {
        known = known || s.store.load(id);
    } catch (const store_read_error&) {
        known = true;  // a damaged row is still a run that has finished
    }
    if (known) return api_error(409, fmt::format("run '{}' has already finished", id));
    return api_error(404, fmt::format("no run '{}' on this daemon", id));
}

}  // namespace meshperf::daemon
