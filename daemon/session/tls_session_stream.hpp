#pragma once
/// A peer session that arrived over TLS on the daemon's listener, seen as a blocking
/// transport::byte_stream by the session thread. The TLS state lives in an Asio stream on
/// the I/O thread, so every read and write is posted there and the session thread waits
/// for it with its deadline (a timer cancels the operation when the deadline passes).
#include "transport/byte_stream.hpp"

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>

namespace meshperf::daemon {

/// The TLS stream type of the daemon's listener.
using tls_tcp_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

/// Wraps an established (handshaken) TLS stream for a session thread. The I/O thread must
/// keep running while the session uses it. Timeouts: a read that times out leaves the
/// stream usable; a write that times out breaks it (the session ends anyway).
std::unique_ptr<transport::byte_stream> make_tls_session_stream(std::shared_ptr<tls_tcp_stream> stream);

}  // namespace meshperf::daemon
