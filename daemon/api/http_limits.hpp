#pragma once
/// The limits of the HTTP layer, apart from the server (http_server.hpp) and the parser's
/// configuration (http_request_limits.hpp), which both include it.
#include <cstddef>

namespace meshperf::daemon {

/// Limits of the HTTP layer.
struct http_limits {
    std::size_t max_body_bytes = 64 * 1024;   ///< request bodies larger than this get 413
    std::size_t max_header_bytes = 16 * 1024;
    int idle_timeout_s = 30;                  ///< a connection that sends nothing is closed
};

}  // namespace meshperf::daemon
