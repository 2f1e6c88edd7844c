#pragma once
/// The pieces of an HTTP/1.1 exchange the client's calls share (http_client.cpp,
/// http_connection.cpp): opening the connection, writing a request, and reading a response
/// head and body through a buffer with deadlines. Internal to transport/.
#include "transport/byte_stream.hpp"
#include "transport/http_message.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace meshperf::transport {

/// The connection ended before a single byte of the response arrived (closed or reset).
/// On a connection that had served a request before, the server most likely closed it
/// as idle just as the request went out, so it never saw it.
class closed_unanswered : public http_protocol_error {
public:
    /// `reset`: the error when the connection was reset (empty: closed in order).
    explicit closed_unanswered(const std::string& what, std::error_code reset = {}) : http_protocol_error(what), reset_(reset) {}
    /// ECONNRESET when the connection was reset, empty when it was closed in order.
    std::error_code reset() const { return reset_; }

private:
    std::error_code reset_;
};

/// How a response body was framed, which decides whether the connection can carry another
/// request after it.
enum class body_end {
    length_or_chunked,  ///< Content-Length or chunked: the body ended where it said
    connection_closed,  ///< neither: the body ran to the end of the connection
    stopped,            ///< on_data returned false, or the response was cut short: bytes left unread
};

/// Buffered reader over a stream. Each wait for data ends at the earlier of `timeout` from
/// its start and the whole request's `deadline` (clock::time_point::max(): none), so a
/// peer that drips a byte now and then cannot stretch a call past its deadline.
class http_reader {
public:
    http_reader(byte_stream& s, std::chrono::milliseconds timeout, clock::time_point deadline = clock::time_point::max())
        : s_(s), timeout_(timeout), deadline_(deadline) {}

    /// Sets the whole-request deadline (clock::time_point::max(): none).
    void set_deadline(clock::time_point deadline) { deadline_ = deadline; }

    /// Reads the response head (header names lower-cased; a field sent more than once has its
    /// values joined by ", "), skipping interim 1xx answers (not 101). Throws http_protocol_error for
    /// anything that is not an HTTP/1.x head, closed_unanswered when the connection ended
    /// before any byte, std::system_error for I/O errors and the deadline.
    http_response read_head();

    /// Hands the body to on_data as the head frames it (chunked encoding removed), in pieces
    /// as they arrive. A 1xx, 204 or 304 answer has none.
    body_end read_body(const http_response& head, const std::function<bool(std::string_view)>& on_data);

    /// Bytes read past the response (an upgraded protocol's first bytes).
    std::string take_leftover() { return std::exchange(buf_, {}); }

private:
    bool fill();
    http_response read_one_head();

    byte_stream& s_;
    std::chrono::milliseconds timeout_;
    clock::time_point deadline_;
    std::string buf_;
    bool any_byte_ = false;
};

/// Time left until `deadline`, at least 1 ms (connect_tcp takes a duration).
std::chrono::milliseconds left_until(clock::time_point deadline);

/// Connects, and runs the TLS handshake when `tls` is given, both before `deadline`. `from`
/// (an IP literal; empty: any) is the local address the connection leaves from.
std::unique_ptr<byte_stream> open_http_stream(const endpoint_address& to, const tls_context* tls, clock::time_point deadline,
                                              const std::string& from = {});

/// Writes `req` with Host and (for a body, POST and PUT) Content-Length; "Connection: close"
/// when `close` (one request on this connection).
void send_http_request(byte_stream& s, const endpoint_address& to, const http_request& req, bool close,
                       clock::time_point deadline);

}  // namespace meshperf::transport
