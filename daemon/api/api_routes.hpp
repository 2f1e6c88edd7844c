#pragma once
/// The JSON API's plain request handlers (no I/O): each turns a request into a status and a
/// JSON body. Streaming and upgrades are handled by the HTTP server itself.
#include "daemon/runtime/context.hpp"
#include "daemon/store/result_store.hpp"
#include "daemon/runs/run_manager.hpp"
#include "daemon/runtime/self_peer.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::daemon {

struct api_reply {
    int status = 200;
    nlohmann::json body;
    std::string content_type = "application/json";
    std::string text;  ///< used instead of body when non-empty (e.g. /metrics, /healthz)
    int retry_after_s = 0;  ///< > 0: sent as a Retry-After header (429, 503)
};

/// JSON error body {"error": message}.
api_reply api_error(int status, const std::string& message);

/// Everything the handlers need.
struct api_state {
    daemon_context& ctx;
    run_manager& runs;
    result_store& store;
    listening_socket listening{};  ///< where this daemon's API listens (a run's peer may not be it)
};

api_reply handle_info(api_state&);
api_reply handle_healthz(api_state&);
/// Seconds a client is told to wait (Retry-After) when the run queue is full.
inline constexpr int queue_full_retry_after_s = 10;

/// Parses and validates a run spec body; on success queues it and returns 202 with the run.
/// `record` receives the queued run (for streaming). 400 for a bad spec, or a peer that is
/// this daemon itself ("peer: initiator and peer are the same daemon: ..."); 503 with
/// Retry-After when limits.max_queued_runs runs are already waiting (record stays null).
api_reply handle_submit(api_state&, const std::string& body, std::shared_ptr<run_record>& record);
/// The same for a collective spec (POST /v1/collectives, core/collective/spec.hpp): 400
/// naming the first problem of the spec, 503 when the queue is full; this daemon coordinates.
api_reply handle_submit_collective(api_state&, const std::string& body, std::shared_ptr<run_record>& record);
/// Blocking work of a handler (a store query, a stored document's rendering): routes set it
/// as route_outcome::offload, which the HTTP server runs on its worker pool, off the I/O
/// thread. It captures what it needs by value (api_state holds references to objects that
/// outlive every request).
using blocking_reply = std::function<api_reply()>;

/// GET /v1/runs/{id}: a live run is answered at once; otherwise `offload` receives the store
/// lookup (200; 404 naming the id; 500 naming the file when the row is damaged or SQLite
/// fails). A result not yet stored carries "stored": false and "store_error".
api_reply handle_get_run(api_state&, const std::string& id, blocking_reply& offload);
/// GET /v1/runs?limit=N&peer=HOST:PORT&before=CURSOR: the query is checked at once (400
/// naming the parameter; limit 1..max_run_list_limit); `offload` receives the store query:
/// {"runs": [...], "next": id or null} (500 with the file's name when SQLite fails).
api_reply handle_list_runs(api_state&, const std::string& query, blocking_reply& offload);
/// The same, with the blocking work done in the calling thread (tests, fuzzers).
api_reply handle_get_run(api_state&, const std::string& id);
api_reply handle_list_runs(api_state&, const std::string& query);
api_reply handle_cancel_run(api_state&, const std::string& id);

/// Value of a query parameter ("limit" in "limit=5&peer=x"), URL-decoded; empty if absent.
std::string query_param(const std::string& query, const std::string& name);

/// The `peer` parameter of GET /v1/runs and /v1/baselines, URL-decoded and as written;
/// empty when absent. Throws core::spec_error naming the parameter ("peer: address '::::'
/// has a bad port ''...") when it is not a HOST[:PORT], which both answer with 400.
std::string peer_query_param(const std::string& query);

}  // namespace meshperf::daemon
