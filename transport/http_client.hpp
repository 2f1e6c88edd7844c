#pragma once
/// A small blocking HTTP/1.1 client with deadlines, shared by the CLI (API calls, NDJSON
/// streams) and the daemon (upgrading a connection to a peer session or data stream).
/// http_call and http_stream send one request per connection; http_connection.hpp keeps
/// one open between requests.
#include "transport/byte_stream.hpp"
#include "transport/http_message.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace meshperf::transport {

class tls_context;

/// Thrown by http_upgrade when the other end accepted the connection (and the TLS
/// handshake) but did not answer the upgrade by the deadline: reached, then silent (a
/// frozen or overloaded daemon), unlike a connect that timed out.
class answer_timeout : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Sends a request and reads the whole response. `timeout` bounds the whole exchange:
/// connect, the TLS handshake, send and reading the head and body all end by one deadline
/// (a daemon that is frozen, slow or drips bytes cannot stretch it). `tls` (a client context) encrypts the
/// connection; nullptr sends plain HTTP. Throws std::system_error (connect, TLS, I/O,
/// timeout) or http_protocol_error.
http_response http_call(const endpoint_address& to, const http_request& req, std::chrono::milliseconds timeout,
                        const tls_context* tls = nullptr);

/// Sends a request and hands the body to `on_data` piece by piece as it arrives (chunked
/// encoding removed), until the body ends. `connect_timeout` bounds connect, send and the
/// response head together (and a non-2xx answer's body); after a 2xx head, `idle_timeout`
/// bounds each wait for body bytes (silence), and the body may last as long as bytes keep
/// coming. `on_head` (may be empty) sees a 2xx head before the body. Returns the response
/// head (body empty, unless not 2xx). on_data returning false stops reading. Throws as
/// http_call; silence past idle_timeout is std::system_error with ETIMEDOUT.
http_response http_stream(const endpoint_address& to, const http_request& req, std::chrono::milliseconds connect_timeout,
                          std::chrono::milliseconds idle_timeout, const std::function<bool(std::string_view)>& on_data,
                          const tls_context* tls = nullptr, const std::function<void(const http_response&)>& on_head = {});

/// Result of an upgrade: the connection, now speaking the upgraded protocol (null when the
/// upgrade was refused), and any bytes that arrived after the 101 response head.
struct upgraded_connection {
    std::unique_ptr<byte_stream> stream;
    std::string leftover;
};

/// Sends an upgrade request (GET target, "Connection: Upgrade", "Upgrade: protocol") and
/// expects "101 Switching Protocols" within `timeout` (one deadline for connect, TLS, send
/// and the answer). Any other status returns the response in `refused` and a null stream. `tls` as for http_call. Throws std::system_error or
/// http_protocol_error. `from` (an IP literal; empty: any) is the local address the
/// connection leaves from (connect_tcp).
upgraded_connection http_upgrade(const endpoint_address& to, const http_request& req, const std::string& protocol,
                                 std::chrono::milliseconds timeout, http_response& refused,
                                 const tls_context* tls = nullptr, const std::string& from = {});

}  // namespace meshperf::transport
