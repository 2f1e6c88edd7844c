#pragma once
/// Upgrading a connection to a peer session or data stream (the daemon), with deadlines.
/// API calls and NDJSON streams (the CLI) go through http_connection.hpp.
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

/// Result of an upgrade: the connection, now speaking the upgraded protocol (null when the
/// upgrade was refused), and any bytes that arrived after the 101 response head.
struct upgraded_connection {
    std::unique_ptr<byte_stream> stream;
    std::string leftover;
};

/// Sends an upgrade request (GET target, "Connection: Upgrade", "Upgrade: protocol") and
/// expects "101 Switching Protocols" within `timeout` (one deadline for connect, TLS, send
/// and the answer). Any other status returns the response in `refused` and a null stream. `tls` (a client
/// context) encrypts the connection; nullptr sends plain HTTP. Throws std::system_error or
/// http_protocol_error. `from` (an IP literal; empty: any) is the local address the
/// connection leaves from (connect_tcp).
upgraded_connection http_upgrade(const endpoint_address& to, const http_request& req, const std::string& protocol,
                                 std::chrono::milliseconds timeout, http_response& refused,
                                 const tls_context* tls = nullptr, const std::string& from = {});

}  // namespace meshperf::transport
