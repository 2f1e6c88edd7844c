#pragma once
/// How meshperfd configures the parser of each HTTP request: one place, shared by the
/// server and by the HTTP fuzz target (tests/fuzz/http_request_fuzz.cpp), so the fuzzer
/// parses requests under exactly the daemon's limits.
#include "core/utf8.hpp"
#include "daemon/api/http_limits.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <string_view>

namespace meshperf::daemon {

/// Applies `limits` to a fresh request parser: bodies over max_body_bytes fail with
/// http::error::body_limit (413), headers over max_header_bytes with http::error::header_limit
/// (431). Call before the first read.
inline void configure_request_parser(boost::beast::http::request_parser<boost::beast::http::string_body>& parser,
                                     const http_limits& limits) {
    parser.body_limit(limits.max_body_bytes);
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
}

/// The most a connection's read buffer may hold: a header, a body and one read's worth of a
/// pipelined next request. Beast's reads fail with buffer_overflow (answered 400) past it.
inline std::size_t connection_buffer_bound(const http_limits& limits) {
    return limits.max_header_bytes + limits.max_body_bytes + 64 * 1024;
}

/// What is wrong with a request's head that Beast accepts but the daemon must not: a
/// chunked body (411: Beast bounds neither chunk extensions nor trailer fields, so the body
/// is never read), text that is not UTF-8 (it would enter JSON: the path of a 404, a peer
/// name) or holds a NUL (400). Empty when the head is fine; `status` says which answer.
inline std::string refusal_of_head(const boost::beast::http::request<boost::beast::http::string_body>& req, int& status) {
    status = 400;
    if (req.chunked()) {
        status = 411;
        return "chunked request bodies are not accepted: send the body with a Content-Length header";
    }
    const auto target = std::string_view(req.target());
    if (!core::is_valid_utf8(target) || target.find('\0') != std::string_view::npos)
        return "the request target is not valid UTF-8: percent-encode bytes outside ASCII";
    for (const auto& field : req) {
        const auto value = std::string_view(field.value());
        if (!core::is_valid_utf8(value) || value.find('\0') != std::string_view::npos)
            return fmt::format("the value of header '{}' is not valid UTF-8 text",
                               core::to_valid_utf8(std::string_view(field.name_string())));
    }
    return {};
}

}  // namespace meshperf::daemon
