#include "daemon/api/http_server.hpp"

#include "core/utf8.hpp"

#include "daemon/api/api_routes.hpp"
#include "daemon/runtime/auth.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/api/http_request_limits.hpp"
#include "daemon/api/local_copy_route.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/api/route_table.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/runs/peer_session.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/session/tls_session_stream.hpp"
#include "transport/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <openssl/ssl.h>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <array>
#include <charconv>
#include <functional>
#include <map>
#include <tuple>
#include <fmt/format.h>
#include <thread>

namespace meshperf::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

/// Connections waiting for their client to send something (a request, a TLS handshake),
/// oldest first. At the connection limit the oldest is dropped to make room, so idle or
/// slow clients (slowloris) can never lock the others out. I/O thread only.
class idle_connections {
public:
    /// Registers a waiting connection; `drop` cancels its wait. Returns its id.
    std::uint64_t add(std::function<void()> drop) {
        waiting_.emplace(next_, std::move(drop));
        return next_++;
    }
    /// The connection is no longer waiting (or was dropped: then nothing happens).
    void remove(std::uint64_t id) { waiting_.erase(id); }
    /// Drops the connection that has waited longest. False when none waits.
    bool drop_oldest() {
        if (waiting_.empty()) return false;
        auto drop = std::move(waiting_.begin()->second);
        waiting_.erase(waiting_.begin());
        drop();
        ++dropped_;
        return true;
    }
    std::uint64_t dropped() const { return dropped_; }

private:
    std::map<std::uint64_t, std::function<void()>> waiting_;
    std::uint64_t next_ = 0;
    std::uint64_t dropped_ = 0;
};

/// Marks a connection as waiting for the duration of one read.
class waiting_mark {
public:
    waiting_mark(idle_connections& idle, std::function<void()> drop) : idle_(idle), id_(idle.add(std::move(drop))) {}
    ~waiting_mark() { idle_.remove(id_); }
    waiting_mark(const waiting_mark&) = delete;
    waiting_mark& operator=(const waiting_mark&) = delete;

private:
    idle_connections& idle_;
    std::uint64_t id_;
};

struct server_state {
    server_state(daemon_context& c, run_manager& r, result_store& st, const http_limits& l)
        : ctx(c), runs(r), store(st), limits(l) {}
    daemon_context& ctx;
    run_manager& runs;
    result_store& store;
    http_limits limits;
    auth_throttle throttle{ctx.auth_throttle};
    std::unique_ptr<asio::ssl::context> tls;  ///< set when the control plane is TLS
    std::size_t open_connections = 0;         ///< I/O thread only
    listening_socket listening;               ///< the socket accept_loop accepts on
    /// A rail address's listener (start_stream_listener): data streams only, no API.
    bool streams_only = false;
    std::string api_address;                  ///< with streams_only: where the API is, for refusals
    idle_connections idle;
    std::uint64_t refused_heads = 0;          ///< requests refused for their head (I/O thread only)
    /// Runs routes' blocking work (store queries, rendering stored results) off the I/O
    /// thread, so /healthz and the other connections never wait for history.
    asio::thread_pool workers{http_worker_threads};
};

/// What a connection is, for the routes it may use.
enum class channel_kind {
    plain,            ///< plain HTTP on a daemon without TLS: everything
    tls,              ///< TLS: everything but data streams (plain TCP by design)
    plain_beside_tls, ///< plain HTTP on a daemon with TLS: data streams, /healthz, open /metrics
    streams_only      ///< a rail address of a daemon whose API listens elsewhere: data streams only
};

/// Turns the connection into the byte stream a session thread reads (plain socket or TLS).
using session_handover = std::function<std::unique_ptr<transport::byte_stream>()>;

response make_response(const request& req, const api_reply& r) {
    response res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "meshperfd/" MESHPERF_VERSION);
    res.set(http::field::content_type, r.content_type);
    res.keep_alive(req.keep_alive());
    res.body() = r.text.empty() ? r.body.dump(2, ' ', false, json::error_handler_t::replace) + "\n" : r.text;
    if (r.retry_after_s > 0) res.set(http::field::retry_after, std::to_string(r.retry_after_s));
    if (r.status == 401) res.set(http::field::www_authenticate, std::string(www_authenticate_challenge));
    res.prepare_payload();
    return res;
}

response plain_error(unsigned version, int status, const std::string& message) {
    response res{static_cast<http::status>(status), version};
    res.set(http::field::server, "meshperfd/" MESHPERF_VERSION);
    res.set(http::field::content_type, "application/json");
    res.keep_alive(false);
    res.body() = json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    res.prepare_payload();
    return res;
}

enum class auth_outcome { ok, denied, throttled };

/// Checks the bearer token; repeated failures from one address are slowed down (429).
auth_outcome authorize(server_state& s, const request& req, const beast::tcp_stream& tcp,
                       std::chrono::milliseconds& retry_after) {
    if (s.ctx.token.empty()) return auth_outcome::ok;
    beast::error_code ec;
    const auto remote = tcp.socket().remote_endpoint(ec);
    const auto client = parse_ip_address(ec ? std::string("0.0.0.0") : remote.address().to_string());
    const auto who = client.value_or(ip_address{});
    if ((retry_after = s.throttle.retry_after(who)).count() > 0) return auth_outcome::throttled;
    if (bearer_matches(s.ctx.token, std::string_view(req[http::field::authorization]))) {
        s.throttle.record_success(who);
        return auth_outcome::ok;
    }
    retry_after = s.throttle.record_failure(who);
    log_warn("authentication failed from {}", client ? client->to_string() : "?");
    return auth_outcome::denied;
}

api_reply auth_reply(auth_outcome o, std::chrono::milliseconds retry_after) {
    if (o == auth_outcome::throttled) {
        auto r = api_error(429, fmt::format("too many failed authentications from this address: retry in {} s",
                                          (retry_after.count() + 999) / 1000));
        r.retry_after_s = static_cast<int>((retry_after.count() + 999) / 1000);
        return r;
    }
    return api_error(401, "missing or wrong bearer token: send 'Authorization: Bearer <cluster token>'");
}

/// Streams a run's events as NDJSON in chunked encoding until its result, or until the
/// client goes away (the run goes on; nothing is lost). Returns whether the connection can
/// take another request: the whole stream was written and the client asked for keep-alive
/// (the matrix coordinator reuses its connection to a daemon round after round).
template <class Stream>
asio::awaitable<bool> stream_events(Stream& stream, const request& req, std::shared_ptr<run_record> run) {
    http::response<http::empty_body> head{http::status::ok, req.version()};
    head.set(http::field::server, "meshperfd/" MESHPERF_VERSION);
    head.set(http::field::content_type, "application/x-ndjson");
    head.set("X-Meshperf-Run", run->id());
    head.chunked(true);
    head.keep_alive(req.keep_alive());
    http::response_serializer<http::empty_body> sr{head};
    beast::get_lowest_layer(stream).expires_never();
    auto [ec, n] = co_await http::async_write_header(stream, sr, use_tuple);
    if (ec) co_return false;
    const auto executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor);
    std::size_t next = 0;
    const std::string heartbeat = json{{"event", "heartbeat"}, {"run_id", run->id()}}.dump() + "\n";
    auto last_write = std::chrono::steady_clock::now();
    while (true) {
        bool finished = false;
        auto lines = run->events_since(next, finished);
        next += lines.size();
        if (lines.empty() && !finished && std::chrono::steady_clock::now() - last_write >= event_stream_heartbeat)
            lines.push_back(heartbeat.substr(0, heartbeat.size() - 1));
        for (auto& l : lines) {
            l += '\n';
            const auto chunk = http::make_chunk(asio::buffer(l));
            // A client that stops reading (frozen, gone without a FIN) is let go; the run goes on.
            beast::get_lowest_layer(stream).expires_after(event_stream_write_deadline);
            auto [wec, wn] = co_await asio::async_write(stream, chunk, use_tuple);
            if (wec) co_return false;
            last_write = std::chrono::steady_clock::now();
        }
        if (finished && lines.empty()) break;
        if (lines.empty()) {
            timer.expires_after(std::chrono::milliseconds(50));
            co_await timer.async_wait(use_tuple);
        }
    }
    beast::get_lowest_layer(stream).expires_after(event_stream_write_deadline);
    const auto last_chunk = http::make_chunk_last();
    auto [lec, ln] = co_await asio::async_write(stream, last_chunk, use_tuple);
    co_return !lec && req.keep_alive();
}

/// Waits, without blocking the I/O thread, for a copy sweep (POST /v1/local) to end.
asio::awaitable<api_reply> local_copy_result(std::shared_ptr<local_copy_job> job) {
    const auto executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor);
    while (!job->done()) {
        timer.expires_after(std::chrono::milliseconds(50));
        co_await timer.async_wait(use_tuple);
    }
    co_return api_reply_of(job->reply());
}

/// Runs a route's blocking work, turning an escaped exception into a 500 and rendering the
/// JSON here (on the worker thread) rather than on the I/O thread.
api_reply run_blocking_work(const std::function<api_reply()>& work) noexcept {
    api_reply r;
    try {
        r = work();
        if (r.text.empty()) {
            r.text = r.body.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
            r.body = nullptr;
        }
    } catch (const std::exception& e) {
        log_warn("request failed: {}", e.what());
        r = api_error(500, fmt::format("internal error: {} (see the daemon's log)", core::to_valid_utf8(e.what())));
    } catch (...) {
        r = api_error(500, "internal error (see the daemon's log)");
    }
    return r;
}

/// A coroutine around run_blocking_work, spawned on the worker pool.
asio::awaitable<api_reply> blocking_work(std::function<api_reply()> work) {
    co_return run_blocking_work(work);
}

/// Why an upgrade request is refused: the status and the sentence the client reads.
struct upgrade_refusal {
    int status = 0;
    std::string message;
};

/// What an upgrade request (GET /v1/session or /v1/stream) asks for: its route's upgrade,
/// and what its target says.
struct upgrade_ask {
    route_upgrade upgrade = route_upgrade::session;
    std::string path;       ///< "/v1/session" or "/v1/stream", for the log
    std::string token;      ///< data stream: the token of the session that expects it
    std::size_t index = 0;  ///< data stream: its index in that session
    bool is_session() const { return upgrade == route_upgrade::session; }
};

upgrade_ask read_upgrade_ask(std::string_view target, route_upgrade upgrade) {
    upgrade_ask ask;
    ask.upgrade = upgrade;
    const auto qpos = target.find('?');
    ask.path = std::string(target.substr(0, qpos));
    const auto query = qpos == std::string_view::npos ? std::string() : std::string(target.substr(qpos + 1));
    ask.token = query_param(query, "token");
    const auto index_text = query_param(query, "index");
    std::from_chars(index_text.data(), index_text.data() + index_text.size(), ask.index);
    return ask;
}

/// Decides an upgrade request: nullopt to accept it, else the refusal to write. A plain
/// function, not a coroutine: GCC 12 miscompiles temporaries and reference-capturing
/// lambdas inside co_await expressions (a 426 used to free a std::string twice and kill
/// the daemon), so handle_upgrade only co_awaits the writing of a named response built from
/// what this returns. An accepted session gets the measurement gate's lease in `lease`.
std::optional<upgrade_refusal> refuse_upgrade(server_state& s, const request& req, const beast::tcp_stream& tcp,
                                              channel_kind kind, const upgrade_ask& ask, measurement_gate::lease& lease) {
    beast::error_code rec;
    const auto remote = tcp.socket().remote_endpoint(rec);
    const auto remote_ip = rec ? std::string("?") : remote.address().to_string();
    if (auto why = incoming_peer_refusal(s.ctx, remote_ip)) {
        log_warn("refused {} upgrade: {}", ask.path, *why);
        return upgrade_refusal{403, std::move(*why)};
    }
    std::chrono::milliseconds wait{0};
    if (const auto a = authorize(s, req, tcp, wait); a != auth_outcome::ok) {
        const auto r = auth_reply(a, wait);
        return upgrade_refusal{r.status, r.body["error"].get<std::string>()};
    }
    if (ask.is_session() && kind == channel_kind::streams_only)
        return upgrade_refusal{403, fmt::format("this address takes the rails' data streams only: open peer sessions on the "
                                                "daemon's listen address ({})",
                                                s.api_address)};
    if (ask.is_session() && kind == channel_kind::plain_beside_tls)
        return upgrade_refusal{403, "this meshperfd requires TLS for peer sessions: give the initiating daemon --tls-cert, "
                                    "--tls-key and --tls-ca too"};
    if (!ask.is_session() && kind == channel_kind::tls)
        return upgrade_refusal{400, "data streams are plain TCP: open /v1/stream without TLS"};
    const auto proto_text = std::string(req[protocol_header]);
    int proto = 0;
    std::from_chars(proto_text.data(), proto_text.data() + proto_text.size(), proto);
    if (proto != session_protocol_version())
        return upgrade_refusal{426, fmt::format("session protocol mismatch: this meshperfd ({}) speaks version {}, the "
                                                "initiator version {}; upgrade both to the same meshperf major version",
                                                MESHPERF_VERSION, session_protocol_version(),
                                                proto_text.empty() ? "none" : proto_text)};
    const auto upgrade_to = std::string(req[http::field::upgrade]);
    if (!ask.is_session()) {
        if (upgrade_to != data_upgrade || !s.ctx.streams.expects(ask.token, ask.index))
            return upgrade_refusal{403, "no session expects this data stream"};
        return std::nullopt;
    }
    if (upgrade_to != session_upgrade) return upgrade_refusal{400, fmt::format("upgrade to {} expected", session_upgrade)};
    // Before the gate: this daemon's own run holds it, and would wait for itself.
    if (!s.ctx.instance_id.empty() && req[instance_header] == s.ctx.instance_id)
        return upgrade_refusal{409, fmt::format("initiator and peer are the same daemon: this meshperfd ({}) received a "
                                                "session it opened itself; give another daemon as the peer",
                                                s.ctx.host.address)};
    std::string holder;
    lease = s.ctx.gate.try_acquire("session from " + remote_ip, holder);
    if (!lease) return upgrade_refusal{503, fmt::format("measuring ({})", holder)};
    return std::nullopt;
}

/// Answers 101 and hands the connection to a session thread (plain or TLS) or the stream
/// registry (plain only), or writes the refusal.
template <class Stream>
asio::awaitable<void> handle_upgrade(server_state& s, Stream& stream, channel_kind kind, const session_handover& hand_over,
                                     beast::flat_buffer& buffer, const request& req, std::string_view target,
                                     route_upgrade upgrade) {
    const upgrade_ask ask = read_upgrade_ask(target, upgrade);
    const bool is_session = ask.is_session();
    const unsigned version = req.version();
    measurement_gate::lease lease;  // a session's, handed to its thread; freed on every other path
    const std::optional<upgrade_refusal> refusal = refuse_upgrade(s, req, beast::get_lowest_layer(stream), kind, ask, lease);
    if (refusal) {
        response refused = plain_error(version, refusal->status, refusal->message);
        co_await http::async_write(stream, refused, use_tuple);
        co_return;
    }
    http::response<http::empty_body> res{http::status::switching_protocols, version};
    res.set(http::field::upgrade, is_session ? session_upgrade : data_upgrade);
    res.set(http::field::connection, "Upgrade");
    auto [ec, n] = co_await http::async_write(stream, res, use_tuple);
    if (ec) co_return;
    std::string leftover(static_cast<const char*>(buffer.data().data()), buffer.size());
    std::unique_ptr<transport::byte_stream> handed;
    try {
        handed = hand_over();
    } catch (const std::exception& e) {
        log_warn("handing over {}: {}", ask.path, e.what());
    }
    if (!handed) co_return;
    if (is_session) {
        const auto name = "session from " + transport::peer_ip(handed->fd());
        std::thread([&ctx = s.ctx, handed = std::move(handed), leftover = std::move(leftover), name,
                     lease = std::move(lease)]() mutable {
            serve_session(ctx, frame_channel(std::move(handed), std::move(leftover), name), std::move(lease));
        }).detach();
    } else {
        s.ctx.streams.deliver(ask.token, ask.index, handed->release_socket());
    }
}

/// Reads one request; the connection counts as idle (droppable) meanwhile. The header comes
/// first: a chunked body is not read at all (the caller answers 411), because Beast bounds
/// neither chunk extensions nor trailer fields (a 64 KiB trailer value threw out of the
/// parser and ended the daemon; 17 MB of small ones grew its memory without limit).
template <class Stream>
asio::awaitable<std::tuple<beast::error_code, std::size_t>> read_request(server_state& s, Stream& stream,
                                                                         beast::flat_buffer& buffer,
                                                                         http::request_parser<http::string_body>& parser) {
    auto& tcp = beast::get_lowest_layer(stream);
    waiting_mark waiting(s.idle, [&tcp] { tcp.cancel(); });
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
    if (ec || parser.is_done() || parser.chunked()) co_return std::tuple{ec, n};
    auto [bec, bn] = co_await http::async_read(stream, buffer, parser, use_tuple);
    co_return std::tuple{bec, n + bn};
}


/// Waits for a new connection's first byte; the connection counts as idle meanwhile.
asio::awaitable<std::tuple<beast::error_code>> wait_first_byte(server_state& s, tcp::socket& socket) {
    waiting_mark waiting(s.idle, [&socket] {
        beast::error_code ignored;
        socket.cancel(ignored);
    });
    co_return co_await socket.async_wait(tcp::socket::wait_read, use_tuple);
}

/// The answer to a request that could not be read: nullopt when the client just went away
/// (closed, reset, idle too long), else a 413, 431 or 400 naming the problem.
std::optional<response> unreadable_request_reply(const server_state& s, beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
        return std::nullopt;
    const int status = ec == http::error::body_limit ? 413 : (ec == http::error::header_limit ? 431 : 400);
    const auto msg = status == 413 ? fmt::format("request body too large (limit {} bytes)", s.limits.max_body_bytes)
                                   : fmt::format("malformed HTTP request: {}", ec.message());
    return plain_error(11, status, msg);
}

/// Runs a plain request through the route table (daemon/api/route_table.hpp): open routes
/// first, then the TLS-only refusal and the token, then 404 or the route's handler.
route_outcome route_request(server_state& s, api_state& api, const request& req, beast::tcp_stream& tcp,
                            channel_kind kind, const std::string& path, const std::string& query) {
    std::string id;
    const route* r = find_route(path, id);
    std::chrono::milliseconds wait{0};
    if (!(r && route_is_open(*r, s.ctx.metrics_require_token))) {
        if (kind == channel_kind::plain_beside_tls)
            return reply_only(api_error(403, "this meshperfd serves its API over TLS only: connect with TLS (meshperf "
                                             "--tls-ca CA.pem, and --tls-cert/--tls-key if it asks for a client certificate)"));
        if (const auto a = authorize(s, req, tcp, wait); a != auth_outcome::ok) return reply_only(auth_reply(a, wait));
        if (!r) return reply_only(no_such_endpoint(path));
    }
    return call_route(*r, route_call{api, req, query, id, tcp.socket().native_handle()});
}

/// Closes a connection after a refusal without losing the answer: closing with unread
/// input (the chunked body, the rest of a bad request) makes the kernel send a reset, and
/// the client's kernel may drop the answer before the client reads it. So: stop sending,
/// read and discard what still comes (at most linger_bytes, for at most linger_time), then close.
asio::awaitable<void> linger_close(beast::tcp_stream& tcp) {
    constexpr std::size_t linger_bytes = 64 * 1024;
    constexpr auto linger_time = std::chrono::seconds(1);
    beast::error_code ec;
    tcp.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) co_return;
    tcp.expires_after(linger_time);
    std::array<char, 4096> sink;
    std::size_t drained = 0;
    while (drained < linger_bytes) {
        auto [rec, n] = co_await tcp.async_read_some(asio::buffer(sink), use_tuple);
        if (rec) break;
        drained += n;
    }
}

/// Writes the answer to a request the server will not read further (5 s to take it), then
/// closes without losing it (linger_close).
template <class Stream>
asio::awaitable<void> write_refusal(Stream& stream, response& refused) {
    auto& tcp = beast::get_lowest_layer(stream);
    tcp.expires_after(std::chrono::seconds(5));
    co_await http::async_write(stream, refused, use_tuple);
    auto closing = linger_close(tcp);
    co_await std::move(closing);
}

/// Serves HTTP requests on one connection (plain or TLS) until it closes or upgrades.
template <class Stream>
asio::awaitable<void> handle_connection(server_state& s, Stream& stream, channel_kind kind, session_handover hand_over) {
    auto& tcp = beast::get_lowest_layer(stream);
    // Bounded: a header, a body and one read's worth of a pipelined next request, whatever
    // the client sends (Beast's reads then fail with buffer_overflow, answered 400).
    beast::flat_buffer buffer(connection_buffer_bound(s.limits));
    api_state api{s.ctx, s.runs, s.store, s.listening};
    while (true) {
        http::request_parser<http::string_body> parser;
        configure_request_parser(parser, s.limits);
        tcp.expires_after(std::chrono::seconds(s.limits.idle_timeout_s));
        auto [ec, n] = co_await read_request(s, stream, buffer, parser);
        if (ec) {
            std::optional<response> refused = unreadable_request_reply(s, ec);
            if (!refused) co_return;
            auto refusing = write_refusal(stream, *refused);
            co_await std::move(refusing);
            co_return;
        }
        int head_status = 0;
        if (const auto why = refusal_of_head(parser.get(), head_status); !why.empty()) {
            // Logged, but not one line per request of a flood: the first ten, then every thousandth.
            if (++s.refused_heads <= 10 || s.refused_heads % 1000 == 0)
                log_warn("refused a request ({} so far): {}", s.refused_heads, why);
            response refused = plain_error(parser.get().version(), head_status, why);
            auto refusing = write_refusal(stream, refused);
            co_await std::move(refusing);
            co_return;
        }
        auto req = parser.release();
        const std::string target(req.target());
        const auto qpos = target.find('?');
        const std::string path = target.substr(0, qpos);
        const std::string query = qpos == std::string::npos ? "" : target.substr(qpos + 1);
        log_debug("{} {}", std::string(req.method_string()), target);
        const route_upgrade upgrade = requested_upgrade(req, path);
        if (upgrade != route_upgrade::none) {
            co_await handle_upgrade(s, stream, kind, hand_over, buffer, req, target, upgrade);
            co_return;
        }
        if (kind == channel_kind::streams_only) {  // the API is not served on the rails' addresses
            response refused = plain_error(req.version(), 403,
                                           fmt::format("this address takes the rails' data streams only: the API of this "
                                                       "meshperfd is on {}",
                                                       s.api_address));
            auto refusing = write_refusal(stream, refused);
            co_await std::move(refusing);
            co_return;
        }
        route_outcome outcome = route_request(s, api, req, tcp, kind, path, query);
        if (outcome.event_stream) {
            auto events = stream_events(stream, req, std::move(outcome.event_stream));
            if (!co_await std::move(events)) co_return;
            continue;
        }
        if (outcome.offload) {
            auto work = asio::co_spawn(s.workers, blocking_work(std::move(outcome.offload)), asio::use_awaitable);
            outcome.reply = co_await std::move(work);
            tcp.expires_after(std::chrono::seconds(s.limits.idle_timeout_s));
        }
        if (outcome.copy_job) {
            auto copy_sweep = local_copy_result(std::move(outcome.copy_job));
            outcome.reply = co_await std::move(copy_sweep);
            tcp.expires_after(std::chrono::seconds(s.limits.idle_timeout_s));  // the read's deadline has passed
        }
        auto res = make_response(req, outcome.reply);
        auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
        if (wec || !res.keep_alive()) co_return;
    }
}

/// Plain HTTP: the socket itself is handed over on upgrade.
asio::awaitable<void> serve_plain(server_state& s, beast::tcp_stream stream, channel_kind kind) {
    session_handover hand_over = [&stream]() -> std::unique_ptr<transport::byte_stream> {
        beast::error_code ec;
        transport::socket_fd fd(stream.release_socket().release(ec));
        if (ec || !fd) return nullptr;
        transport::set_blocking(fd.get(), true);
        return transport::make_plain_stream(std::move(fd));
    };
    auto connection = handle_connection(s, stream, kind, std::move(hand_over));
    co_await std::move(connection);
}

/// The server side of a TLS handshake; the connection counts as idle meanwhile.
asio::awaitable<std::tuple<beast::error_code>> handshake(server_state& s, tls_tcp_stream& stream) {
    auto& tcp = beast::get_lowest_layer(stream);
    waiting_mark waiting(s.idle, [&tcp] { tcp.cancel(); });
    co_return co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
}

/// TLS: handshake, then HTTP; a session keeps the TLS stream (shared with its thread).
asio::awaitable<void> serve_tls(server_state& s, beast::tcp_stream tcp_stream) {
    auto stream = std::make_shared<tls_tcp_stream>(std::move(tcp_stream), *s.tls);
    beast::get_lowest_layer(*stream).expires_after(std::chrono::seconds(10));
    auto [ec] = co_await handshake(s, *stream);
    if (ec) {
        beast::error_code rec;
        const auto remote = beast::get_lowest_layer(*stream).socket().remote_endpoint(rec);
        log_warn("TLS handshake with {} failed: {}", rec ? std::string("?") : remote.address().to_string(), ec.message());
        co_return;
    }
    session_handover hand_over = [stream]() { return make_tls_session_stream(stream); };
    auto connection = handle_connection(s, *stream, channel_kind::tls, std::move(hand_over));
    co_await std::move(connection);
}

/// One accepted connection: with TLS configured, its first byte tells a TLS handshake from
/// plain HTTP (data streams, health checks).
asio::awaitable<void> serve_connection(std::shared_ptr<server_state> state, tcp::socket socket) {
    server_state& s = *state;  // kept alive by `state` for as long as this connection lasts
    struct open_count {
        std::size_t& n;
        explicit open_count(std::size_t& c) : n(c) { ++n; }
        ~open_count() { --n; }
    } counted{s.open_connections};
    if (s.open_connections > s.ctx.limits.max_connections) {
        // At the limit: drop the connection that has waited longest for its client (it ends
        // as soon as the I/O thread gets to it); when none is idle, a short answer and close,
        // so the daemon never runs out of descriptors or memory however many clients connect.
        if (s.idle.drop_oldest()) {
            if (s.idle.dropped() % 1000 == 1)
                log_warn("connection limit ({}) reached: dropping the longest-idle connections to make room ({} so far)",
                         s.ctx.limits.max_connections, s.idle.dropped());
        } else {
            static const std::string body = R"({"error":"too many connections to this meshperfd: retry later"})" "\n";
            static const std::string busy = fmt::format(
                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
                "Connection: close\r\nContent-Length: {}\r\n\r\n{}", body.size(), body);
            if (!s.tls) {
                beast::error_code ec;
                socket.non_blocking(true, ec);
                socket.send(asio::buffer(busy), 0, ec);
            }
            co_return;
        }
    }
    if (s.streams_only || !s.tls) {  // data streams are plain TCP, with or without TLS on the API
        auto plain = serve_plain(s, beast::tcp_stream(std::move(socket)), s.streams_only ? channel_kind::streams_only : channel_kind::plain);
        co_await std::move(plain);
        co_return;
    }
    asio::steady_timer first_byte_timer(socket.get_executor(), std::chrono::seconds(s.limits.idle_timeout_s));
    first_byte_timer.async_wait([&socket](const beast::error_code& ec) {
        if (!ec) socket.cancel();
    });
    auto [wec] = co_await wait_first_byte(s, socket);
    first_byte_timer.cancel();
    if (wec) co_return;
    unsigned char first = 0;
    beast::error_code pec;
    const auto n = socket.receive(asio::buffer(&first, 1), tcp::socket::message_peek, pec);
    if (pec || n == 0) co_return;
    auto served = first == transport::tls_handshake_record
                      ? serve_tls(s, beast::tcp_stream(std::move(socket)))
                      : serve_plain(s, beast::tcp_stream(std::move(socket)), channel_kind::plain_beside_tls);
    co_await std::move(served);
}

/// Completion of a connection's coroutine: an exception that escaped it (a parser or a
/// handler that threw) ends that connection only, logged; never the daemon.
void contain_connection_failure(std::exception_ptr failure) noexcept {
    if (!failure) return;
    try {
        std::rethrow_exception(failure);
    } catch (const std::exception& e) {
        log_warn("a connection ended on an internal error (the daemon goes on): {}", core::to_valid_utf8(e.what()));
    } catch (...) {
        log_warn("a connection ended on an unknown internal error (the daemon goes on)");
    }
}

asio::awaitable<void> accept_loop(std::shared_ptr<server_state> state, tcp::acceptor acceptor) {
    while (true) {
        auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
        if (ec == asio::error::operation_aborted) co_return;
        if (ec) {
            // Out of descriptors and the like: back off instead of spinning.
            log_warn("accept: {}", ec.message());
            asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(100));
            co_await t.async_wait(use_tuple);
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        asio::co_spawn(acceptor.get_executor(), serve_connection(state, std::move(socket)), contain_connection_failure);
    }
}

}  // namespace

std::uint16_t start_http_server(asio::io_context& io, const std::string& listen, daemon_context& ctx, run_manager& runs,
                                result_store& store, const http_limits& limits) {
    const auto ep = transport::parse_endpoint(listen);
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
    if (ec) throw std::system_error(EINVAL, std::generic_category(), fmt::format("--listen {}: '{}' is not an IP address", listen, ep.host));
    return start_http_server(io, tcp::endpoint(addr, ep.port), ctx, runs, store, limits);
}

namespace {

/// Binds `endpoint` and starts accepting on it; `streams_only` with the API's address for a
/// rail address's listener.
std::uint16_t start_listener(asio::io_context& io, const tcp::endpoint& endpoint, daemon_context& ctx, run_manager& runs,
                             result_store& store, const http_limits& limits, const std::string* streams_only_api) {
    boost::system::error_code ec;
    tcp::acceptor acceptor(io);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint, ec);
    if (ec) {
        const auto where = endpoint.address().is_v6() ? fmt::format("[{}]:{}", endpoint.address().to_string(), endpoint.port())
                                                      : fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
        throw std::system_error(ec.value(), std::generic_category(), fmt::format("bind {}", where));
    }
    acceptor.listen(asio::socket_base::max_listen_connections);
    const auto port = acceptor.local_endpoint().port();
    // Owned by the accept loop and every connection's coroutine: freed with the last of them.
    auto state = std::make_shared<server_state>(ctx, runs, store, limits);
    state->listening = {acceptor.local_endpoint().address().to_string(), port};
    if (streams_only_api) {
        state->streams_only = true;
        state->api_address = *streams_only_api;
    }
    if (ctx.tls_server && !streams_only_api) {
        // Asio's context takes a reference of its own on the SSL_CTX.
        SSL_CTX_up_ref(ctx.tls_server->native());
        state->tls = std::make_unique<asio::ssl::context>(ctx.tls_server->native());
    }
    asio::co_spawn(io, accept_loop(std::move(state), std::move(acceptor)), asio::detached);
    return port;
}

}  // namespace

std::uint16_t start_http_server(asio::io_context& io, const tcp::endpoint& endpoint, daemon_context& ctx, run_manager& runs,
                                result_store& store, const http_limits& limits) {
    return start_listener(io, endpoint, ctx, runs, store, limits, nullptr);
}

std::uint16_t start_stream_listener(asio::io_context& io, const tcp::endpoint& endpoint, const std::string& api_address,
                                    daemon_context& ctx, run_manager& runs, result_store& store, const http_limits& limits) {
    return start_listener(io, endpoint, ctx, runs, store, limits, &api_address);
}

}  // namespace meshperf::daemon
