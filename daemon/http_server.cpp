#include "daemon/http_server.hpp"

#include "daemon/api_routes.hpp"
#include "daemon/auth.hpp"
#include "daemon/frame_channel.hpp"
#include "daemon/log.hpp"
#include "daemon/monitoring_routes.hpp"
#include "daemon/peer_policy.hpp"
#include "daemon/responder.hpp"
#include "daemon/session_protocol.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
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

struct server_state {
    daemon_context& ctx;
    run_manager& runs;
    result_store& store;
    http_limits limits;
    auth_throttle throttle{ctx.auth_throttle};
};

response make_response(const request& req, const api_reply& r) {
    response res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "meshperfd/" MESHPERF_VERSION);
    res.set(http::field::content_type, r.content_type);
    res.keep_alive(req.keep_alive());
    res.body() = r.text.empty() ? r.body.dump(2) + "\n" : r.text;
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
    res.body() = json{{"error", message}}.dump() + "\n";
    res.prepare_payload();
    return res;
}

bool header_contains(const request& req, http::field f, std::string_view token) {
    const auto v = std::string(req[f]);
    std::string lower;
    for (char c : v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find(token) != std::string::npos;
}

enum class auth_outcome { ok, denied, throttled };

/// Checks the bearer token; repeated failures from one address are slowed down (429).
auth_outcome authorize(server_state& s, const request& req, const beast::tcp_stream& stream,
                       std::chrono::milliseconds& retry_after) {
    if (s.ctx.token.empty()) return auth_outcome::ok;
    beast::error_code ec;
    const auto remote = stream.socket().remote_endpoint(ec);
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
/// client goes away (the run goes on; nothing is lost).
asio::awaitable<void> stream_events(beast::tcp_stream& stream, const request& req, std::shared_ptr<run_record> run) {
    http::response<http::empty_body> head{http::status::ok, req.version()};
    head.set(http::field::server, "meshperfd/" MESHPERF_VERSION);
    head.set(http::field::content_type, "application/x-ndjson");
    head.set("X-Meshperf-Run", run->id());
    head.chunked(true);
    head.keep_alive(false);
    http::response_serializer<http::empty_body> sr{head};
    stream.expires_never();
    auto [ec, n] = co_await http::async_write_header(stream, sr, use_tuple);
    if (ec) co_return;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    std::size_t next = 0;
    while (true) {
        bool finished = false;
        auto lines = run->events_since(next, finished);
        next += lines.size();
        for (auto& l : lines) {
            l += '\n';
            auto [wec, wn] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(l)), use_tuple);
            if (wec) co_return;
        }
        if (finished && lines.empty()) break;
        if (lines.empty()) {
            timer.expires_after(std::chrono::milliseconds(50));
            co_await timer.async_wait(use_tuple);
        }
    }
    co_await asio::async_write(stream, http::make_chunk_last(), use_tuple);
}

/// Answers 101 and hands the socket to a session or stream thread. Returns false when the
/// upgrade was refused (a response has been written).
asio::awaitable<void> handle_upgrade(server_state& s, beast::tcp_stream& stream, beast::flat_buffer& buffer, request& req,
                                     std::string_view target) {
    const auto path = target.substr(0, target.find('?'));
    const auto query = target.find('?') == std::string_view::npos ? std::string() : std::string(target.substr(target.find('?') + 1));
    const auto version = req.version();
    auto refuse = [&](int status, const std::string& msg) -> asio::awaitable<void> {
        auto res = plain_error(version, status, msg);
        co_await http::async_write(stream, res, use_tuple);
    };
    {
        beast::error_code rec;
        const auto remote = stream.socket().remote_endpoint(rec);
        if (const auto why = incoming_peer_refusal(s.ctx, rec ? std::string("?") : remote.address().to_string())) {
            log_warn("refused {} upgrade: {}", path, *why);
            co_await refuse(403, *why);
            co_return;
        }
    }
    std::chrono::milliseconds wait{0};
    if (const auto a = authorize(s, req, stream, wait); a != auth_outcome::ok) {
        const auto r = auth_reply(a, wait);
        co_await refuse(r.status, r.body["error"].get<std::string>());
        co_return;
    }
    const auto proto_text = std::string(req[protocol_header]);
    int proto = 0;
    std::from_chars(proto_text.data(), proto_text.data() + proto_text.size(), proto);
    if (proto != session_protocol_version()) {
        co_await refuse(426, fmt::format("session protocol mismatch: this meshperfd ({}) speaks version {}, the initiator "
                                         "version {}; upgrade both to the same meshperf major version",
                                         MESHPERF_VERSION, session_protocol_version(), proto_text.empty() ? "none" : proto_text));
        co_return;
    }
    const bool is_session = path == "/v1/session";
    const auto token = query_param(query, "token");
    std::size_t index = 0;
    const auto index_text = query_param(query, "index");
    std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
    const auto upgrade_to = std::string(req[http::field::upgrade]);
    if (is_session) {
        if (upgrade_to != session_upgrade) { co_await refuse(400, fmt::format("upgrade to {} expected", session_upgrade)); co_return; }
        std::string holder;
        const auto peer_ip = stream.socket().remote_endpoint().address().to_string();
        if (!s.ctx.gate.try_acquire("session from " + peer_ip, holder)) {
            co_await refuse(503, fmt::format("measuring ({})", holder));
            co_return;
        }
    } else {
        if (upgrade_to != data_upgrade || !s.ctx.streams.expects(token, index)) {
            co_await refuse(403, "no session expects this data stream");
            co_return;
        }
    }
    http::response<http::empty_body> res{http::status::switching_protocols, version};
    res.set(http::field::upgrade, is_session ? session_upgrade : data_upgrade);
    res.set(http::field::connection, "Upgrade");
    auto [ec, n] = co_await http::async_write(stream, res, use_tuple);
    if (ec) {
        if (is_session) s.ctx.gate.release();
        co_return;
    }
    std::string leftover(static_cast<const char*>(buffer.data().data()), buffer.size());
    beast::error_code rel_ec;
    transport::socket_fd fd(stream.release_socket().release(rel_ec));
    if (rel_ec || !fd) {
        if (is_session) s.ctx.gate.release();
        co_return;
    }
    transport::set_blocking(fd.get(), true);
    if (is_session) {
        const auto name = "session from " + transport::peer_ip(fd.get());
        std::thread([&ctx = s.ctx, fd = std::move(fd), leftover = std::move(leftover), name]() mutable {
            serve_session(ctx, frame_channel(std::move(fd), std::move(leftover), name));
        }).detach();
    } else {
        s.ctx.streams.deliver(token, index, std::move(fd));
    }
}

asio::awaitable<void> handle_connection(server_state& s, tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    api_state api{s.ctx, s.runs, s.store};
    while (true) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(s.limits.max_body_bytes);
        parser.header_limit(static_cast<std::uint32_t>(s.limits.max_header_bytes));
        stream.expires_after(std::chrono::seconds(s.limits.idle_timeout_s));
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_tuple);
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
            ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
            co_return;
        if (ec) {
            const int status = ec == http::error::body_limit ? 413 : (ec == http::error::header_limit ? 431 : 400);
            const auto msg = status == 413 ? fmt::format("request body too large (limit {} bytes)", s.limits.max_body_bytes)
                                           : fmt::format("malformed HTTP request: {}", ec.message());
            auto res = plain_error(11, status, msg);
            stream.expires_after(std::chrono::seconds(5));
            co_await http::async_write(stream, res, use_tuple);
            co_return;
        }
        auto req = parser.release();
        const std::string target(req.target());
        const auto qpos = target.find('?');
        const std::string path = target.substr(0, qpos);
        const std::string query = qpos == std::string::npos ? "" : target.substr(qpos + 1);
        log_debug("{} {}", std::string(req.method_string()), target);

        if (header_contains(req, http::field::connection, "upgrade") && req.method() == http::verb::get &&
            (path == "/v1/session" || path == "/v1/stream")) {
            co_await handle_upgrade(s, stream, buffer, req, target);
            co_return;
        }

        api_reply reply;
        std::shared_ptr<run_record> record;
        std::chrono::milliseconds wait{0};
        if (path == "/healthz") {
            reply = req.method() == http::verb::get ? handle_healthz(api) : api_error(405, "use GET /healthz");
        } else if (path == "/metrics" && !s.ctx.metrics_require_token) {
            reply = req.method() == http::verb::get ? handle_metrics(api) : api_error(405, "use GET /metrics");
        } else if (const auto a = authorize(s, req, stream, wait); a != auth_outcome::ok) {
            reply = auth_reply(a, wait);
        } else if (path == "/v1/info") {
            reply = req.method() == http::verb::get ? handle_info(api) : api_error(405, "use GET /v1/info");
        } else if (path == "/v1/runs") {
            if (req.method() == http::verb::post) {
                if (req[http::field::content_type].find("json") == std::string_view::npos && !req[http::field::content_type].empty())
                    reply = api_error(415, "send the run spec as application/json");
                else
                    reply = handle_submit(api, req.body(), record);
                if (record && header_contains(req, http::field::accept, "application/x-ndjson")) {
                    co_await stream_events(stream, req, record);
                    co_return;
                }
            } else if (req.method() == http::verb::get) {
                reply = handle_list_runs(api, query);
            } else {
                reply = api_error(405, "use GET or POST on /v1/runs");
            }
        } else if (path == "/metrics") {
            reply = req.method() == http::verb::get ? handle_metrics(api) : api_error(405, "use GET /metrics");
        } else if (path == "/v1/baselines") {
            reply = handle_baselines(api, std::string(req.method_string()), query, req.body());
        } else if (path.rfind("/v1/runs/", 0) == 0 && path.size() > 9) {
            const auto id = path.substr(9);
            if (req.method() == http::verb::get) reply = handle_get_run(api, id);
            else if (req.method() == http::verb::delete_) reply = handle_cancel_run(api, id);
            else reply = api_error(405, "use GET or DELETE on /v1/runs/{id}");
        } else {
            reply = api_error(404, fmt::format("no such endpoint {} (see docs/api.md)", path));
        }
        auto res = make_response(req, reply);
        auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
        if (wec || !res.keep_alive()) co_return;
    }
}

asio::awaitable<void> accept_loop(server_state& s, tcp::acceptor acceptor) {
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
        asio::co_spawn(acceptor.get_executor(), handle_connection(s, std::move(socket)), asio::detached);
    }
}

}  // namespace

void start_http_server(asio::io_context& io, const std::string& listen, daemon_context& ctx, run_manager& runs,
                       result_store& store, const http_limits& limits) {
    const auto ep = transport::parse_endpoint(listen);
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
    if (ec) throw std::system_error(EINVAL, std::generic_category(), fmt::format("--listen {}: '{}' is not an IP address", listen, ep.host));
    tcp::endpoint endpoint(addr, ep.port);
    tcp::acceptor acceptor(io);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint, ec);
    if (ec) throw std::system_error(ec.value(), std::generic_category(), fmt::format("bind {}", listen));
    acceptor.listen(asio::socket_base::max_listen_connections);
    auto* state = new server_state{ctx, runs, store, limits};  // lives as long as the process
    asio::co_spawn(io, accept_loop(*state, std::move(acceptor)), asio::detached);
}

}  // namespace meshperf::daemon
