#include "daemon/api/route_table.hpp"

#include "daemon/api/local_copy_route.hpp"
#include "daemon/api/monitoring_routes.hpp"
#include "daemon/api/node_routes.hpp"
#include "transport/socket.hpp"

#include <cctype>
#include <fmt/format.h>

namespace meshperf::daemon {

namespace http = boost::beast::http;

namespace {

/// A body that says it is something other than JSON (no Content-Type is taken as JSON).
bool sends_other_than_json(const http_request& req) {
    const auto type = req[http::field::content_type];
    return !type.empty() && type.find("json") == std::string_view::npos;
}

route_outcome get_healthz(const route_call& c) { return reply_only(handle_healthz(c.api)); }
route_outcome get_metrics(const route_call& c) { return reply_only(handle_metrics(c.api)); }
// /v1/info with the node's rails and GPU pairing (node_routes.hpp), the GPUs numbered as
// the info's CUDA part numbers them.
// On the worker pool: the interface scan takes seconds on a node with 10,000 veths, and
// /healthz must not wait behind it on the I/O thread.
route_outcome get_info(const route_call& c) {
    route_outcome out;
    out.offload = [api = c.api]() mutable {
        auto reply = handle_info(api);
        auto node = node_info(api, reply.body["gpus"]);
        reply.body["rails"] = std::move(node["rails"]);
        reply.body["gpu_rail_pairs"] = std::move(node["gpu_rail_pairs"]);
        return reply;
    };
    return out;
}
// Store reads go to the worker pool (route_outcome::offload).
route_outcome get_runs(const route_call& c) {
    route_outcome out;
    out.reply = handle_list_runs(c.api, c.query, out.offload);
    return out;
}
route_outcome get_run(const route_call& c) {
    route_outcome out;
    out.reply = handle_get_run(c.api, c.id, out.offload);
    return out;
}
route_outcome delete_run(const route_call& c) { return reply_only(handle_cancel_run(c.api, c.id)); }

// The node's inspection reads configuration space and sysfs: on the worker pool.
route_outcome inspect_route(const route_call& c, bool post) {
    if (post && sends_other_than_json(c.req)) return reply_only(api_error(415, "send the manifest as application/json"));
    auto slot = take_inspection_slot();
    if (!slot) return reply_only(inspection_busy_reply());
    route_outcome out;
    // Stops when its client leaves (the connection's socket stays open while the work runs).
    out.offload = [api = c.api, body = c.req.body(), post, slot = std::move(slot), fd = c.client_fd] {
        return handle_inspect(api, body, post, [fd] { return transport::peer_has_closed(fd); });
    };
    return out;
}
route_outcome get_inspect(const route_call& c) { return inspect_route(c, false); }
route_outcome get_inspect_last(const route_call& c) { return reply_only(handle_inspect_last(c.api)); }
route_outcome post_inspect(const route_call& c) { return inspect_route(c, true); }

using submit_handler = api_reply (*)(api_state&, const std::string&, std::shared_ptr<run_record>&);

/// A POST that queues a run: 415 unless the body is JSON (`what` names it), then `submit`'s
/// reply, and the run's event stream when the client asks for NDJSON.
route_outcome post_queued(const route_call& c, std::string_view what, submit_handler submit) {
    if (sends_other_than_json(c.req)) return reply_only(api_error(415, fmt::format("send the {} as application/json", what)));
    route_outcome out;
    std::shared_ptr<run_record> record;
    out.reply = submit(c.api, c.req.body(), record);
    if (record && header_contains(c.req, http::field::accept, "application/x-ndjson")) out.event_stream = std::move(record);
    return out;
}

route_outcome post_run(const route_call& c) { return post_queued(c, "run spec", handle_submit); }
route_outcome post_collective(const route_call& c) { return post_queued(c, "collective spec", handle_submit_collective); }

route_outcome post_local(const route_call& c) {
    if (sends_other_than_json(c.req))
        return reply_only(api_error(415, "send the copy sweep request as application/json"));
    route_outcome out;
    out.reply = handle_local_copy(c.api, c.req.body(), out.copy_job);
    return out;
}

route_outcome any_baselines(const route_call& c) {
    route_outcome out;
    out.offload = [api = c.api, method = std::string(c.req.method_string()), query = c.query, body = c.req.body()]() mutable {
        return handle_baselines(api, method, query, body);
    };
    return out;
}

// An upgrade route asked for anything but its upgrade: as if the path were unknown.
route_outcome not_an_upgrade(const route_call& c) {
    const auto target = std::string_view(c.req.target());
    return reply_only(no_such_endpoint(target.substr(0, target.find('?'))));
}

// Exact paths first; the one prefix route last.
const route routes[] = {
    {"/healthz", route_access::open, "use GET /healthz", get_healthz},
    {"/metrics", route_access::token_unless_metrics_open, "use GET /metrics", get_metrics},
    {"/v1/info", route_access::token, "use GET /v1/info", get_info},
    {"/v1/runs", route_access::token, "use GET or POST on /v1/runs", get_runs, post_run},
    {"/v1/baselines", route_access::token, "", nullptr, nullptr, nullptr, any_baselines},
    {"/v1/local", route_access::token, "use POST /v1/local", nullptr, post_local},
    {"/v1/collectives", route_access::token, "use POST /v1/collectives", nullptr, post_collective},
    {"/v1/inspect", route_access::token, "use GET or POST on /v1/inspect", get_inspect, post_inspect},
    {"/v1/inspect/last", route_access::token, "use GET /v1/inspect/last", get_inspect_last},
    {"/v1/session", route_access::peer, "", nullptr, nullptr, nullptr, not_an_upgrade, route_upgrade::session},
    {"/v1/stream", route_access::peer, "", nullptr, nullptr, nullptr, not_an_upgrade, route_upgrade::stream},
    {"/v1/runs/", route_access::token, "use GET or DELETE on /v1/runs/{id}", get_run, nullptr, delete_run},
};

}  // namespace

bool header_contains(const http_request& req, http::field f, std::string_view token) {
    std::string lower(req[f]);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find(token) != std::string::npos;
}

route_outcome reply_only(api_reply r) { return route_outcome{std::move(r), nullptr, nullptr}; }

api_reply no_such_endpoint(std::string_view path) { return api_error(404, fmt::format("no such endpoint {} (see docs/api.md)", path)); }

route_upgrade requested_upgrade(const http_request& req, std::string_view path) {
    if (req.method() != http::verb::get || !header_contains(req, http::field::connection, "upgrade")) return route_upgrade::none;
    std::string id;
    const route* r = find_route(path, id);
    return r ? r->upgrade : route_upgrade::none;
}

const route* find_route(std::string_view path, std::string& id) {
    for (const auto& r : routes) {
        if (r.path.back() != '/') {
            if (path == r.path) return &r;
        } else if (path.size() > r.path.size() && path.substr(0, r.path.size()) == r.path) {
            id = std::string(path.substr(r.path.size()));
            return &r;
        }
    }
    return nullptr;
}

bool route_is_open(const route& r, bool metrics_require_token) {
    return r.access == route_access::open ||
           (r.access == route_access::token_unless_metrics_open && !metrics_require_token);
}

route_outcome call_route(const route& r, const route_call& call) {
    if (r.any_method) return r.any_method(call);
    route_handler h = nullptr;
    switch (call.req.method()) {
        case http::verb::get: h = r.get; break;
        case http::verb::post: h = r.post; break;
        case http::verb::delete_: h = r.del; break;
        default: break;
    }
    if (!h) return reply_only(api_error(405, std::string(r.allowed)));
    return h(call);
}

}  // namespace meshperf::daemon
