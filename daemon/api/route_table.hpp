#pragma once
/// The routes of the API as one table: each path, who may call it, a handler per method, and
/// for the two upgrade routes (/v1/session, /v1/stream) what the connection becomes. The HTTP
/// server (http_server.cpp) reads requests, checks the token as a route's access asks, and
/// calls `call_route`; it carries out what outlasts a plain reply (an NDJSON event stream, a
/// copy sweep's wait) and the upgrades `requested_upgrade` names. No I/O here.
#include "daemon/api/api_routes.hpp"
#include "daemon/runs/local_copy_job.hpp"

#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/message.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace meshperf::daemon {

/// One HTTP request as Beast parsed it.
using http_request = boost::beast::http::request<boost::beast::http::string_body>;

/// Who may call a route.
enum class route_access {
    open,                      ///< anyone (/healthz)
    token,                     ///< the cluster token, when the daemon has one
    token_unless_metrics_open, ///< /metrics: open unless the configuration asks for the token
    peer                       ///< an upgrade: an allowed peer address, then the token (the server's upgrade checks)
};

/// What an upgrade route turns its connection into.
enum class route_upgrade {
    none,     ///< a plain route: a reply per request
    session,  ///< a peer session (Upgrade: meshperf-session/1), served on a thread of its own
    stream    ///< a data stream (Upgrade: meshperf-data/1) for the session whose token it names
};

/// What the server needs to know about one call of a route.
struct route_call {
    api_state& api;
    const http_request& req;
    std::string query;  ///< the target after '?', as sent
    std::string id;     ///< for a prefix route (/v1/runs/{id}): what follows the prefix
    /// The connection's socket (-1: none), open until the reply is written: offloaded work
    /// may ask transport::peer_has_closed whether its client is still there.
    int client_fd = -1;
};

/// A route's answer: a reply to write, or work the connection finishes on its own.
struct route_outcome {
    api_reply reply;
    std::shared_ptr<run_record> event_stream;  ///< set: stream this run's events as NDJSON instead of `reply`
    std::shared_ptr<local_copy_job> copy_job;  ///< set: wait for this copy sweep; its reply replaces `reply`
    /// Set: blocking work (a store query, rendering a stored result) that the HTTP server
    /// runs on its worker pool, off the I/O thread; its reply replaces `reply`. It must not
    /// touch the route_call (gone by then): capture what it needs by value.
    std::function<api_reply()> offload;
};

/// Handles one method of one route.
using route_handler = route_outcome (*)(const route_call&);

/// One path of the API.
struct route {
    std::string_view path;   ///< exact, or a prefix when it ends in '/' (the rest is the id, never empty)
    route_access access = route_access::token;
    std::string_view allowed;  ///< the 405 sentence for other methods ("use GET /v1/info")
    route_handler get = nullptr;
    route_handler post = nullptr;
    route_handler del = nullptr;
    route_handler any_method = nullptr;  ///< takes every method itself (/v1/baselines)
    /// Set: a GET with "Connection: upgrade" upgrades (the server's part); any other request
    /// is answered as for an unknown path (any_method).
    route_upgrade upgrade = route_upgrade::none;
};

/// Whether header `f` of `req` contains `token`, compared in lower case (Connection: Upgrade,
/// Accept: application/x-ndjson). `token` must be lower case.
bool header_contains(const http_request& req, boost::beast::http::field f, std::string_view token);

/// A route's answer that is just a reply.
route_outcome reply_only(api_reply r);

/// The 404 for a path no route serves.
api_reply no_such_endpoint(std::string_view path);

/// The upgrade `req` asks for on `path`: its route's, when it is a GET with "Connection:
/// upgrade" on an upgrade route; none otherwise (the request then goes through call_route).
route_upgrade requested_upgrade(const http_request& req, std::string_view path);

/// The route serving `path`, or nullptr (404). For a prefix route `id` receives the rest.
const route* find_route(std::string_view path, std::string& id);

/// Whether `r` is answered without the token on this daemon.
bool route_is_open(const route& r, bool metrics_require_token);

/// Calls r's handler for the request's method, or answers 405 with r.allowed.
route_outcome call_route(const route& r, const route_call& call);

}  // namespace meshperf::daemon
