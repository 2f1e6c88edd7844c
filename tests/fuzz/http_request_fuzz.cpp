/// Fuzz target: bytes on a meshperfd HTTP connection. Requests are read as the server reads
/// them (beast http::read into one flat_buffer, a fresh request_parser per request,
/// configured by configure_request_parser under the daemon's default limits, bytes arriving
/// in chunks, keep-alive requests back to back), and every request that parses goes through
/// the pure helpers the server applies to untrusted fields: the target's path and query,
/// query_param, the bearer token check, the protocol header and stream index of an upgrade,
/// the run spec body of POST /v1/runs, the collective spec body of POST /v1/collectives, the query and figures of /v1/baselines, and the
/// address helpers of daemon/runtime/auth.hpp on header values.
///
/// Since c603c45 the server reads a request's head first and refuses a chunked body (411)
/// without parsing it: Beast bounds neither chunk extensions nor trailer fields (a trailer
/// value of 65,534 B threw std::length_error out of io.run and ended meshperfd; 17 MB of small
/// trailer fields grew its memory without bound: issue 25). This target reads as the server
/// now does, with the server's own refusal_of_head and connection_buffer_bound
/// (daemon/api/http_request_limits.hpp; read_request's two steps are mirrored here, as it
/// is a coroutine): one flat_buffer bounded at header + body + 64 KiB, the head first,
/// a chunked request or a head with non-UTF-8 or NUL in its target or a field value refused
/// after the head, the body read only then. Properties: no exception escapes Beast's parser
/// (the daemon would die), the buffer never passes its bound, a refused head never reaches
/// the body parser, a request the routes see has valid UTF-8 and no NUL in its target and
/// fields, and core::is_valid_utf8 agrees with nlohmann::json's strict dump() on every
/// target and field value (core::to_valid_utf8's output always dumps).
///
/// Large inputs from small ones: after byte 0, the three bytes "\x00\xffR" followed by a
/// count k and a byte c stand for c repeated k KiB times, and "\x00\xffP" k n followed by n
/// bytes for those bytes repeated to k KiB (1 MiB in all at most), so seeds and mutations
/// reach the 16 KiB header limit, a 65,534-byte trailer value, a megabyte of small trailer
/// fields or a 200 KiB chunk extension without libFuzzer's -max_len growing.
#include "core/transport_rules.hpp"
#include "core/check_figures.hpp"
#include "core/utf8.hpp"
#include "core/run_spec.hpp"
#include "daemon/api/api_routes.hpp"
#include "daemon/runtime/auth.hpp"
#include "daemon/api/http_request_limits.hpp"
#include "daemon/api/route_table.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace daemon = meshperf::daemon;
using meshperf::fuzz::property_failed;
using nlohmann::json;

/// A SyncReadStream over the fuzz input that hands out at most `chunk` bytes per read, as a
/// socket may.
struct chunked_input {
    std::string_view rest;
    std::size_t chunk = 1;

    template <class MutableBuffers>
    std::size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
        if (rest.empty()) {
            ec = asio::error::eof;
            return 0;
        }
        ec = {};
        const auto n = asio::buffer_copy(buffers, asio::buffer(rest.data(), std::min(chunk, rest.size())));
        rest.remove_prefix(n);
        return n;
    }
    template <class MutableBuffers>
    std::size_t read_some(const MutableBuffers& buffers) {
        beast::error_code ec;
        const auto n = read_some(buffers, ec);
        if (ec) throw beast::system_error(ec);
        return n;
    }
};

constexpr std::string_view cluster_token = "fuzz-token_0123456789abcdef";

using meshperf::daemon::header_contains;  // the server's own, from daemon/api/route_table.hpp

/// The input with every "\x00\xffR" k c replaced by k KiB of c, and every "\x00\xffP" k n
/// followed by n bytes by those n bytes repeated to k KiB (see the file's comment).
std::string expand(std::string_view in) {
    constexpr std::size_t max_expanded = 1u << 20;
    std::string out;
    std::size_t at = 0;
    while (at < in.size()) {
        const auto m = in.find(std::string_view("\x00\xff", 2), at);
        if (m == std::string_view::npos || m + 5 > in.size() || (in[m + 2] != 'R' && in[m + 2] != 'P')) {
            const auto upto = m == std::string_view::npos ? in.size() : m + 1;
            out.append(in.substr(at, upto - at));
            at = upto;
            continue;
        }
        out.append(in.substr(at, m - at));
        const std::size_t want = static_cast<unsigned char>(in[m + 3]) * std::size_t{1024};
        const std::size_t room = max_expanded > out.size() ? max_expanded - out.size() : 0;
        if (in[m + 2] == 'R') {
            out.append(std::min(want, room), in[m + 4]);
            at = m + 5;
            continue;
        }
        const std::size_t n = static_cast<unsigned char>(in[m + 4]);
        const auto pattern = in.substr(m + 5, n);
        at = m + 5 + pattern.size();
        if (pattern.empty()) continue;
        for (std::size_t made = 0; made + pattern.size() <= std::min(want, room); made += pattern.size()) out.append(pattern);
    }
    return out;
}

/// core::is_valid_utf8 must agree with what nlohmann::json's dump() accepts (the daemon
/// checks text with the one before it dumps it with the other), and to_valid_utf8 must
/// always yield text that dumps, unchanged when it was valid.
void check_utf8_agrees(std::string_view text) {
    const bool valid = meshperf::core::is_valid_utf8(text);
    bool dumps = true;
    try {
        (void)json(std::string(text)).dump();
    } catch (const json::exception&) {
        dumps = false;
    }
    if (valid != dumps) property_failed("core::is_valid_utf8 and nlohmann::json's dump() disagree on this text");
    const auto fixed = meshperf::core::to_valid_utf8(text);
    if (!meshperf::core::is_valid_utf8(fixed)) property_failed("core::to_valid_utf8 yields invalid UTF-8");
    if (valid && fixed != text) property_failed("core::to_valid_utf8 changed valid UTF-8");
    try {
        (void)json(fixed).dump();
    } catch (const json::exception&) {
        property_failed("nlohmann::json cannot dump the output of core::to_valid_utf8");
    }
}

/// The server's own daemon::refusal_of_head (daemon/api/http_request_limits.hpp): true when
/// it answers the head with 411 (chunked) or 400 (target or a field value not UTF-8, or
/// with a NUL) and closes. Checks core::is_valid_utf8 against nlohmann on every text first.
bool head_refused(const http::request<http::string_body>& req) {
    check_utf8_agrees(std::string_view(req.target()));
    for (const auto& field : req) check_utf8_agrees(std::string_view(field.value()));
    int status = 0;
    return !daemon::refusal_of_head(req, status).empty();
}

/// The address helpers of daemon/runtime/auth.hpp on text from the request. The daemon feeds
/// parse_ip_address the socket's address and parse_cidr its configuration file; header
/// values are simply untrusted text at hand. Properties: a parsed address prints and
/// parses back to itself, and a network contains its own address.
void check_address_text(std::string_view text) {
    if (const auto ip = daemon::parse_ip_address(text)) {
        const auto again = daemon::parse_ip_address(ip->to_string());
        if (!again || *again != *ip) property_failed("parse_ip_address(to_string(a)) != a");
        (void)ip->unmapped();
    }
    try {
        const auto net = daemon::parse_cidr(text);
        if (!net.contains(net.network)) property_failed("a CIDR block does not contain its own network address");
        if (daemon::parse_cidr(net.to_string()) != net) property_failed("parse_cidr(to_string(c)) != c");
    } catch (const meshperf::core::spec_error&) {
    }
}

void route(const http::request<http::string_body>& req) {
    const std::string target(req.target());
    const auto qpos = target.find('?');
    const std::string path = target.substr(0, qpos);
    const std::string query = qpos == std::string::npos ? "" : target.substr(qpos + 1);

    // authorize(): only the Authorization header is request bytes.
    const auto authorization = req[http::field::authorization];
    const bool ok = daemon::bearer_matches(cluster_token, authorization);
    const auto bearer = daemon::parse_bearer(authorization);
    if (ok && (!bearer || *bearer != cluster_token)) property_failed("bearer_matches without the token");
    if (bearer && bearer->size() > authorization.size()) property_failed("parse_bearer's view outgrows the header");
    check_address_text(req[http::field::host]);
    check_address_text(req["X-Forwarded-For"]);

    if (daemon::requested_upgrade(req, path) != daemon::route_upgrade::none) {
        const auto proto_text = std::string(req["X-Meshperf-Protocol"]);
        int proto = 0;
        std::from_chars(proto_text.data(), proto_text.data() + proto_text.size(), proto);
        const auto token = daemon::query_param(query, "token");
        std::size_t index = 0;
        const auto index_text = daemon::query_param(query, "index");
        std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
        (void)std::string(req[http::field::upgrade]);
        return;
    }
    std::string route_id;
    if (const auto* r = daemon::find_route(path, route_id)) {  // the route table's lookup, on any path
        if (r->path.back() == '/' && (route_id.empty() || path != std::string(r->path) + route_id))
            property_failed("find_route's id is not the rest of the path");
    }
    if (path == "/v1/collectives" && req.method() == http::verb::post) {
        meshperf::fuzz::check_collective_spec_body(req.body());
    } else if (path == "/v1/runs" && req.method() == http::verb::post) {
        if (req[http::field::content_type].find("json") != std::string_view::npos || req[http::field::content_type].empty())
            meshperf::fuzz::check_run_spec_body(req.body());
    } else if (path == "/v1/runs") {  // handle_list_runs
        std::size_t limit = 20;
        if (const auto l = daemon::query_param(query, "limit"); !l.empty()) std::from_chars(l.data(), l.data() + l.size(), limit);
        (void)daemon::query_param(query, "peer");
    } else if (path == "/v1/baselines") {  // handle_baselines
        if (const auto peer = daemon::query_param(query, "peer"); !peer.empty()) {
            try {
                (void)meshperf::transport::parse_endpoint(peer).to_string();
            } catch (const meshperf::core::spec_error&) {
            }
        }
        if (const auto transport = daemon::query_param(query, "transport"); !transport.empty()) {
            try {
                (void)meshperf::core::transport_rules_of(transport);
            } catch (const meshperf::core::spec_error&) {
            }
        }
        const auto j = json::parse(req.body(), nullptr, false);
        if (j.is_object() && j.contains("figures") && j["figures"].is_array()) {
            try {
                for (const auto& f : j["figures"]) (void)meshperf::core::check_figure_from_json(f);
            } catch (const meshperf::core::spec_error&) {
            }
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // The first byte chooses how the bytes arrive: recv() may return any split.
    const std::string bytes = expand(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
    chunked_input in{bytes, data[0] & 0x80 ? std::size_t{65536} : std::size_t{1} + data[0]};
    const daemon::http_limits limits;  // the daemon's defaults
    const std::size_t buffer_bound = daemon::connection_buffer_bound(limits);  // handle_connection's buffer
    beast::flat_buffer buffer(buffer_bound);
    for (int i = 0; i < 64; ++i) {  // keep-alive: requests back to back on one connection
        http::request_parser<http::string_body> parser;
        daemon::configure_request_parser(parser, limits);
        beast::error_code ec;
        try {
            http::read_header(in, buffer, parser, ec);
            if (!ec && !parser.is_done() && !parser.chunked() && !head_refused(parser.get()))
                http::read(in, buffer, parser, ec);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "escaped the parser: %s\n", e.what());
            property_failed("an exception escaped Beast's request parser (it would end meshperfd's I/O loop)");
        }
        if (buffer.size() > buffer_bound || buffer.capacity() > buffer_bound)
            property_failed("the connection's buffer grew past its bound");
        if (ec) return 0;  // the server answers 400, 413 or 431 and closes
        if (head_refused(parser.get())) {
            if (parser.chunked() && parser.is_done() && !parser.get().body().empty())
                property_failed("a chunked body was parsed although the head is refused");
            return 0;  // 411 or 400, and the connection closes
        }
        const auto req = parser.release();
        if (req.body().size() > limits.max_body_bytes) property_failed("a body over the limit was accepted");
        route(req);
        if (header_contains(req, http::field::connection, "upgrade") || !req.keep_alive()) return 0;
    }
    return 0;
}
