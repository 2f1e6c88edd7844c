#pragma once
/// How meshperfd configures the parser of each HTTP request: one place, shared by the
/// server and by the HTTP fuzz target (tests/fuzz/http_request_fuzz.cpp), so the fuzzer
/// parses requests under exactly the daemon's limits.
#include "daemon/api/http_server.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>

namespace meshperf::daemon {

/// Applies `limits` to a fresh request parser: bodies over max_body_bytes fail with
/// http::error::body_limit (413), headers over max_header_bytes with http::error::header_limit
/// (431). Call before the first read.
inline void configure_request_parser(boost::beast::http::request_parser<boost::beast::http::string_body>& parser,
                                     const http_limits& limits) {
    parser.body_limit(limits.max_body_bytes);
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
}

}  // namespace meshperf::daemon
