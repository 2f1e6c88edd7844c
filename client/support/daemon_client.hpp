#pragma once
/// The CLI's view of a daemon's HTTP API: plain calls that return JSON or throw
/// client_error with a one-line message saying what failed and what to do.
#include "client/support/connection_pool.hpp"
#include "transport/socket.hpp"
#include "transport/tls.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace meshperf::client {

/// Exit codes of the meshperf CLI (documented in docs/cli.md).
enum exit_code : int {
    exit_ok = 0,
    exit_run_failed = 1,   ///< the measurement ran and failed (peer died, data corrupted, ...)
    exit_usage = 2,        ///< invalid options or spec; nothing was sent
    exit_unreachable = 3,  ///< the daemon could not be reached or answered nonsense
};

/// An error for the user: one line, and the exit code it maps to.
class client_error : public std::runtime_error {
public:
    client_error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
    int code() const { return code_; }

private:
    int code_;
};

/// The daemon answered 503 with Retry-After: it is busy (measuring, a full queue) and asks
/// to be called again. The message is the daemon's.
class daemon_busy : public client_error {
public:
    daemon_busy(const std::string& message, int retry_after_s) : client_error(exit_run_failed, message), retry_after_s_(retry_after_s) {}
    int retry_after_s() const { return retry_after_s_; }

private:
    int retry_after_s_;
};

/// The daemon refused the CLI's credentials (401, or 429 after failed authentications):
/// one sentence naming the daemon and where the token came from. Exit 3 for a wrong token,
/// 2 when none was given (an option is missing). Commands that talk to many daemons stop at
/// the first one (the others would refuse the same token).
class auth_refused : public client_error {
public:
    explicit auth_refused(const std::string& message, int code = exit_unreachable) : client_error(code, message) {}
};

/// A run's event stream ended before its result: the daemon stopped sending (nothing, not
/// even a heartbeat, for stream_silence_limit) or the connection broke. Exit 3. Carries
/// what had arrived, so the command can print and save the points measured.
class stream_lost : public client_error {
public:
    /// `points`: the "point" events' point documents in order; `run_id` ("" if unknown).
    stream_lost(const std::string& message, std::vector<nlohmann::json> points, std::string run_id)
        : client_error(exit_unreachable, message), points_(std::move(points)), run_id_(std::move(run_id)) {}
    const std::vector<nlohmann::json>& points() const { return points_; }
    const std::string& run_id() const { return run_id_; }

private:
    std::vector<nlohmann::json> points_;
    std::string run_id_;
};

/// Bound of every plain API call (GET, PUT, DELETE): connect, send, head and body all end
/// within it, however the daemon behaves.
inline constexpr std::chrono::seconds call_timeout{30};

/// Bound of connect, send and the response head of a streamed run or collective.
inline constexpr std::chrono::seconds stream_open_timeout{30};

/// Silence that ends a streamed run or collective: the initiating daemon writes an event or
/// a {"event":"heartbeat"} line at least every second, so this long without a single byte
/// means it is frozen (SIGSTOP, swapped out) or its host is gone. The CLI then exits 3
/// ("stopped answering"), keeping the points measured. Documented in docs/operations.md.
inline constexpr std::chrono::seconds stream_silence_limit{10};

/// How the CLI authenticates to daemons: the bearer token and, when the daemons serve TLS,
/// the client TLS context (CA to verify them, and a client certificate if they ask).
struct credentials {
    std::string token;                                ///< empty: none
    std::shared_ptr<const transport::tls_context> tls;  ///< null: plain HTTP
    /// Where the token came from, for refusals: "the token file PATH", "$MESHPERF_TOKEN";
    /// empty when there is no token.
    std::string token_source;
};

class daemon_client {
public:
    /// address: HOST[:PORT] of a meshperfd. With a `pool` (made with the same credentials'
    /// TLS context), calls reuse its idle connection to this daemon and leave theirs there
    /// for the next call; without one, every call opens and closes its own connection.
    daemon_client(const std::string& address, credentials creds, std::shared_ptr<connection_pool> pool = nullptr);

    /// GET; the whole call ends within `timeout`. Throws client_error (auth_refused for
    /// refused credentials, daemon_busy for 503 with Retry-After).
    nlohmann::json get(const std::string& target, std::chrono::milliseconds timeout = call_timeout) const;
    nlohmann::json del(const std::string& target) const;
    /// PUT with a JSON body.
    nlohmann::json put(const std::string& target, const nlohmann::json& body) const;
    /// POST with a JSON body, waiting up to `timeout` for the answer: for calls that do their
    /// work before answering (POST /v1/local). Errors as for get(); a busy daemon (503 with
    /// Retry-After) throws daemon_busy.
    nlohmann::json post(const std::string& target, const nlohmann::json& body, std::chrono::seconds timeout) const;
    /// POST /v1/runs with Accept: application/x-ndjson; calls on_event for every event line
    /// (heartbeats left out) and returns the final "result" event's result document. Throws
    /// stream_lost when the stream goes silent for stream_silence_limit or breaks after it
    /// began, auth_refused for refused credentials, client_error otherwise.
    nlohmann::json run_streaming(const nlohmann::json& spec, const std::function<void(const nlohmann::json&)>& on_event) const;
    /// POST /v1/collectives (a core::collective_spec as JSON, on the coordinator), streamed as
    /// run_streaming streams a run; returns the collective result document.
    nlohmann::json collective_streaming(const nlohmann::json& spec,
                                        const std::function<void(const nlohmann::json&)>& on_event) const;
    const transport::endpoint_address& address() const { return addr_; }

private:
    /// The pool's connection to this daemon, or a one-shot one without a pool.
    connection_pool::lease connection() const;
    nlohmann::json call(const std::string& method, const std::string& target, const std::string& body,
                        std::chrono::milliseconds timeout) const;
    /// POST `target` with Accept: application/x-ndjson: the event stream of run_streaming.
    nlohmann::json post_streaming(const std::string& target, const nlohmann::json& body,
                                  const std::function<void(const nlohmann::json&)>& on_event) const;
    transport::endpoint_address addr_;
    credentials creds_;
    std::shared_ptr<connection_pool> pool_;
};

/// Reads the token for the CLI: --token-file if given, else $MESHPERF_TOKEN, else empty.
std::string client_token(const std::string& token_file);

/// The token (as client_token) and, when any TLS file is given, a client TLS context loaded
/// from them. Throws client_error (usage) for unreadable or wrong files.
credentials client_credentials(const std::string& token_file, const transport::tls_files& tls);

/// True, after saying so on stderr, when a finished result document says its daemon
/// `where` could not store it (`stored: false`, a full disk): the printed result is then
/// the only copy until the daemon's retry succeeds, and the command exits non-zero.
bool report_not_stored(const nlohmann::json& result_doc, const std::string& what, const std::string& where);

}  // namespace meshperf::client
