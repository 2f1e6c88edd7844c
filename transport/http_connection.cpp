#include "transport/http_connection.hpp"

#include "transport/http_reader.hpp"

#include <algorithm>
#include <cctype>
#include <poll.h>

namespace meshperf::transport {
namespace {

/// Whether the server may take another request on this connection after `r`.
bool server_keeps_open(const http_response& r) {
    const auto it = r.headers.find("connection");
    std::string v = it == r.headers.end() ? std::string() : it->second;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v.find("close") != std::string::npos) return false;
    return r.version_minor >= 1 || v.find("keep-alive") != std::string::npos;
}

/// Whether anything (bytes, a FIN, an error) is waiting on an idle connection's socket: for
/// a connection between requests, each means it is no longer usable.
bool idle_socket_stirred(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) != 0;
}

}  // namespace

http_connection::http_connection(endpoint_address to, const tls_context* tls, bool keep_alive)
    : to_(std::move(to)), tls_(tls), keep_alive_(keep_alive) {}

http_connection::~http_connection() = default;

void http_connection::drop_if_stale() {
    if (!stream_) return;
    if (clock::now() - idle_since_ >= max_idle || idle_socket_stirred(stream_->fd())) stream_.reset();
}

void http_connection::run(const http_request& req, clock::time_point head_deadline, const exchange& ex) {
    drop_if_stale();
    for (int attempt = 0;; ++attempt) {
        const bool reused = stream_ != nullptr;
        if (!reused) {
            stream_ = open_http_stream(to_, tls_, head_deadline);
            ++opened_;
        }
        try {
            ++requests_;
            send_http_request(*stream_, to_, req, !keep_alive_, head_deadline);
            const bool reusable = ex(*stream_, head_deadline);
            if (reusable && keep_alive_) idle_since_ = clock::now();
            else stream_.reset();
            return;
        } catch (const closed_unanswered& e) {
            stream_.reset();
            if (!reused || attempt > 0) {
                if (e.reset()) throw std::system_error(e.reset());  // as a reset reads elsewhere
                throw;
            }
        } catch (const std::system_error& e) {
            stream_.reset();
            // A send into a connection the server closed as idle: EPIPE or a reset.
            const bool closed = e.code() == std::errc::broken_pipe || e.code() == std::errc::connection_reset;
            if (!reused || attempt > 0 || !closed) throw;
        } catch (...) {
            stream_.reset();
            throw;
        }
    }
}

http_response http_connection::call(const http_request& req, std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    http_response r;
    run(req, deadline, [&](byte_stream& s, clock::time_point d) {
        http_reader rd(s, timeout, d);
        r = rd.read_head();
        const auto end = rd.read_body(r, [&](std::string_view data) {
            r.body.append(data);
            return r.body.size() < (64u << 20);
        });
        return end == body_end::length_or_chunked && server_keeps_open(r) && rd.take_leftover().empty();
    });
    return r;
}

http_response http_connection::stream(const http_request& req, std::chrono::milliseconds connect_timeout,
                                      std::chrono::milliseconds idle_timeout,
                                      const std::function<bool(std::string_view)>& on_data,
                                      const std::function<void(const http_response&)>& on_head) {
    http_response r;
    run(req, clock::now() + connect_timeout, [&](byte_stream& s, clock::time_point d) {
        http_reader rd(s, idle_timeout, d);
        r = rd.read_head();
        body_end end;
        if (r.status / 100 != 2) {
            // An error's body, within the head's deadline.
            end = rd.read_body(r, [&](std::string_view data) {
                r.body.append(data);
                return r.body.size() < (1u << 20);
            });
        } else {
            if (on_head) on_head(r);
            // The body may go on for as long as the server keeps sending; only silence ends it.
            rd.set_deadline(clock::time_point::max());
            end = rd.read_body(r, on_data);
        }
        return end == body_end::length_or_chunked && server_keeps_open(r) && rd.take_leftover().empty();
    });
    return r;
}

}  // namespace meshperf::transport
