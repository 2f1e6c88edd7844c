#pragma once
/// One HTTP/1.1 connection to one server, kept open between requests (keep-alive), so a
/// client that calls the same daemon again and again (the matrix coordinator, round after
/// round) connects and runs the TLS handshake once instead of once per request.
///
/// A request goes out on the open connection when it is still usable: it served its last
/// response to the end of a framed body (Content-Length or chunked), the server did not say
/// "Connection: close", it has been idle less than max_idle, and nothing arrived on it
/// while idle (a FIN, a TLS close_notify: the server closed it). Otherwise the connection is
/// closed and a new one opened. When a reused connection ends before a single byte of the
/// answer (the server closed it as idle just as the request went out, so it never saw the
/// request), the request is sent once more on a new connection; any other failure closes
/// the connection and propagates.
/// With keep_alive false it is one request per connection ("Connection: close"). Blocking;
/// one thread at a time.
#include "transport/byte_stream.hpp"
#include "transport/http_message.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace meshperf::transport {

class http_connection {
public:
    /// How long a connection may sit idle and still be reused: below meshperfd's default
    /// idle timeout (30 s), after which the daemon closes it.
    static constexpr std::chrono::seconds max_idle{20};

    /// `tls` (may be null: plain HTTP) must outlive the connection. With `keep_alive`
    /// false every request says "Connection: close" and the connection is not reused.
    http_connection(endpoint_address to, const tls_context* tls, bool keep_alive = true);
    ~http_connection();
    http_connection(const http_connection&) = delete;
    http_connection& operator=(const http_connection&) = delete;

    /// Sends a request and reads the whole response. `timeout` bounds the whole exchange:
    /// (re)connecting, the TLS handshake, send and reading the head and body all end by one
    /// deadline (a server that is frozen, slow or drips bytes cannot stretch it). Throws
    /// std::system_error (connect, TLS, I/O, ETIMEDOUT) or http_protocol_error.
    http_response call(const http_request& req, std::chrono::milliseconds timeout);

    /// Sends a request and hands the body to `on_data` piece by piece as it arrives (chunked
    /// encoding removed), until it ends. `connect_timeout` bounds connect, send and the head
    /// together (and a non-2xx answer's body); after a 2xx head, `idle_timeout` bounds each
    /// wait for body bytes (silence: ETIMEDOUT), and the body may last as long as bytes keep
    /// coming. `on_head` (may be empty) sees a 2xx head first. Returns the head (body empty,
    /// unless not 2xx). on_data returning false stops reading (the connection is then
    /// closed). Throws as call().
    http_response stream(const http_request& req, std::chrono::milliseconds connect_timeout,
                         std::chrono::milliseconds idle_timeout, const std::function<bool(std::string_view)>& on_data,
                         const std::function<void(const http_response&)>& on_head = {});

    const endpoint_address& to() const { return to_; }
    /// Whether a connection is open now (kept from the last response).
    bool is_open() const { return stream_ != nullptr; }
    /// Connections opened so far (each TCP connect, and TLS handshake when encrypted).
    std::uint64_t connections_opened() const { return opened_; }
    /// Requests sent so far, resent ones included.
    std::uint64_t requests_sent() const { return requests_; }

private:
    /// What one attempt does once the request is out: reads the answer, returns whether the
    /// connection can carry another request.
    using exchange = std::function<bool(byte_stream&, clock::time_point head_deadline)>;
    /// Sends `req` on a usable connection (opening one if needed) and runs `ex`; resends
    /// once on a new connection when a reused one closed unanswered.
    void run(const http_request& req, clock::time_point head_deadline, const exchange& ex);
    /// Closes the open connection unless it is still usable.
    void drop_if_stale();

    endpoint_address to_;
    const tls_context* tls_;
    bool keep_alive_;
    std::unique_ptr<byte_stream> stream_;
    clock::time_point idle_since_{};
    std::uint64_t opened_ = 0;
    std::uint64_t requests_ = 0;
};

}  // namespace meshperf::transport
