#pragma once
/// The control plane: HTTP/1.1 on Boost.Beast with Asio C++20 coroutines, one coroutine per
/// connection, on one I/O thread. Serves the JSON API, streams run events as NDJSON, and
/// hands upgraded connections (peer sessions, data streams) to their threads.
#include "daemon/api/http_limits.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/store/result_store.hpp"
#include "daemon/runs/run_manager.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace meshperf::daemon {

/// A run's NDJSON event stream carries `{"event":"heartbeat"}` after this long without an
/// event, so a client can tell a long point from a frozen daemon (docs/api.md).
inline constexpr std::chrono::seconds event_stream_heartbeat{1};
/// A client that takes no event for this long (it stopped reading) is disconnected; the run
/// goes on and is stored.
inline constexpr std::chrono::seconds event_stream_write_deadline{30};
/// Threads that run the routes' blocking work (store queries, rendering stored results).
inline constexpr int http_worker_threads = 2;

/// Binds `listen` ("ADDR:PORT") and accepts connections on `io` until it stops. Returns the
/// port it listens on. Throws std::system_error when the address cannot be bound ("bind
/// 0.0.0.0:7470: Address in use").
std::uint16_t start_http_server(boost::asio::io_context& io, const std::string& listen, daemon_context& ctx,
                                run_manager& runs, result_store& store, const http_limits& limits = {});

/// The same on an endpoint; port 0 lets the kernel choose (tests and fuzz targets serve
/// 127.0.0.1:0 in-process). Returns the port bound. `listen` names the endpoint in errors.
std::uint16_t start_http_server(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
                                daemon_context& ctx, run_manager& runs, result_store& store, const http_limits& limits = {});

/// A listener on a rail's address for a daemon whose API listens on another (its management
/// address): it accepts the rails' data streams (GET /v1/stream upgrades a session expects)
/// and nothing else, answering 403 with `api_address` to anything else. So rails work while
/// the API stays on the management network. Returns the port bound; throws as above.
std::uint16_t start_stream_listener(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
                                    const std::string& api_address, daemon_context& ctx, run_manager& runs, result_store& store,
                                    const http_limits& limits = {});

}  // namespace meshperf::daemon
