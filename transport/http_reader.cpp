#include "transport/http_reader.hpp"

#include "transport/tls.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <system_error>

namespace meshperf::transport {
namespace {

constexpr std::size_t max_head_bytes = 64 * 1024;

std::string lower_ascii(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim_header_value(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

std::string printable_prefix(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 60)) out += (std::isprint(static_cast<unsigned char>(c)) ? c : '.');
    return out;
}

}  // namespace

bool http_reader::fill() {
    char tmp[16384];
    std::size_t n = 0;
    try {
        n = s_.recv_some(tmp, sizeof tmp, std::min(clock::now() + timeout_, deadline_));
    } catch (const std::system_error& e) {
        // A reset before the first byte is the same as a close before it.
        if (!any_byte_ && e.code() == std::errc::connection_reset)
            throw closed_unanswered("reset the connection without answering", e.code());
        throw;
    }
    if (n == 0) return false;
    any_byte_ = true;
    buf_.append(tmp, n);
    return true;
}

http_response http_reader::read_head() {
    // A 1xx (but 101) is an interim answer the final one follows: skipped.
    while (true) {
        auto r = read_one_head();
        if (r.status < 100 || r.status > 199 || r.status == 101) return r;
    }
}

http_response http_reader::read_one_head() {
    std::size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
        if (buf_.size() > max_head_bytes) throw http_protocol_error("response head larger than 64 KiB");
        const auto seen = std::min<std::size_t>(5, buf_.size());
        if (buf_.compare(0, seen, "HTTP/", seen) != 0)
            throw http_protocol_error(fmt::format("answered with non-HTTP bytes \"{}\"", printable_prefix(buf_)));
        if (!fill()) {
            if (!any_byte_) throw closed_unanswered("closed the connection without answering");
            if (buf_.empty()) throw http_protocol_error("closed the connection after an interim (1xx) answer");
            throw http_protocol_error(fmt::format("closed the connection mid-answer after \"{}\"", printable_prefix(buf_)));
        }
    }
    const std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    http_response r;
    const auto first_eol = head.find("\r\n");
    const std::string status_line = head.substr(0, first_eol);
    // "HTTP/1.1 200 OK"
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12)
        throw http_protocol_error(fmt::format("answered with a bad status line \"{}\"", printable_prefix(status_line)));
    const auto code = std::string_view(status_line).substr(9, 3);
    auto [p, ec] = std::from_chars(code.data(), code.data() + 3, r.status);
    if (ec != std::errc() || p != code.data() + 3)
        throw http_protocol_error(fmt::format("answered with a bad status line \"{}\"", printable_prefix(status_line)));
    r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
    r.version_minor = status_line[7] == '1' ? 1 : 0;
    std::size_t pos = first_eol == std::string::npos ? head.size() : first_eol + 2;
    while (pos < head.size()) {
        auto eol = head.find("\r\n", pos);
        if (eol == std::string::npos) eol = head.size();
        const auto line = std::string_view(head).substr(pos, eol - pos);
        const auto colon = line.find(':');
        if (colon != std::string_view::npos) {
            // A field sent twice reads as one list ("close, keep-alive"; two Content-Lengths
            // then fail as one), never as the last one alone.
            auto value = trim_header_value(line.substr(colon + 1));
            const auto [it, added] = r.headers.try_emplace(lower_ascii(std::string(line.substr(0, colon))), value);
            if (!added) it->second += ", " + value;
        }
        pos = eol + 2;
    }
    return r;
}

body_end http_reader::read_body(const http_response& head, const std::function<bool(std::string_view)>& on_data) {
    // 1xx, 204 and 304 answers never have a body, whatever their fields say.
    if (head.status / 100 == 1 || head.status == 204 || head.status == 304) return body_end::length_or_chunked;
    const auto te = head.headers.find("transfer-encoding");
    const auto cl = head.headers.find("content-length");
    if (te != head.headers.end() && lower_ascii(te->second).find("chunked") != std::string::npos) {
        while (true) {
            std::size_t eol;
            while ((eol = buf_.find("\r\n")) == std::string::npos) {
                if (buf_.size() > 1024) throw http_protocol_error("bad chunk header");
                if (!fill()) throw http_protocol_error("connection closed inside a chunked body");
            }
            std::size_t len = 0;
            auto [p, ec] = std::from_chars(buf_.data(), buf_.data() + eol, len, 16);
            if (ec != std::errc()) throw http_protocol_error("bad chunk size");
            (void)p;
            buf_.erase(0, eol + 2);
            if (len == 0) {
                // The last chunk; no trailers are sent by meshperfd: an empty line ends the body.
                while (buf_.size() < 2)
                    if (!fill()) return body_end::stopped;
                if (buf_.compare(0, 2, "\r\n") != 0) return body_end::stopped;  // trailers: not reusable
                buf_.erase(0, 2);
                return body_end::length_or_chunked;
            }
            // The chunk's bytes as they arrive (its size may be any 64-bit number: never
            // buffered whole, never added to), then the CRLF that must end it.
            while (len > 0) {
                if (buf_.empty() && !fill()) throw http_protocol_error("connection closed inside a chunk");
                const auto n = std::min(len, buf_.size());
                if (!on_data(std::string_view(buf_).substr(0, n))) return body_end::stopped;
                buf_.erase(0, n);
                len -= n;
            }
            while (buf_.size() < 2)
                if (!fill()) throw http_protocol_error("connection closed inside a chunk");
            if (buf_.compare(0, 2, "\r\n") != 0) throw http_protocol_error("chunk not ended by CRLF");
            buf_.erase(0, 2);
        }
    }
    if (cl != head.headers.end()) {
        std::size_t left = 0;
        const auto [p, ec] = std::from_chars(cl->second.data(), cl->second.data() + cl->second.size(), left);
        if (ec != std::errc() || p != cl->second.data() + cl->second.size())
            throw http_protocol_error(fmt::format("bad Content-Length \"{}\"", printable_prefix(cl->second)));
        while (left > 0) {
            if (buf_.empty() && !fill()) throw http_protocol_error("connection closed before the body ended");
            const auto n = std::min(left, buf_.size());
            if (!on_data(std::string_view(buf_).substr(0, n))) return body_end::stopped;
            buf_.erase(0, n);
            left -= n;
        }
        return body_end::length_or_chunked;
    }
    while (true) {
        if (!buf_.empty()) {
            if (!on_data(buf_)) return body_end::stopped;
            buf_.clear();
        }
        if (!fill()) return body_end::connection_closed;
    }
}

std::chrono::milliseconds left_until(clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    return std::max(left, std::chrono::milliseconds(1));
}

std::unique_ptr<byte_stream> open_http_stream(const endpoint_address& to, const tls_context* tls, clock::time_point deadline,
                                              const std::string& from) {
    auto fd = connect_tcp(to, left_until(deadline), from);
    if (!tls) return make_plain_stream(std::move(fd));
    return tls_connect(std::move(fd), *tls, to.host, deadline);
}

void send_http_request(byte_stream& s, const endpoint_address& to, const http_request& req, bool close,
                       clock::time_point deadline) {
    std::string out = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\n", req.method, req.target, to.to_string());
    for (const auto& [k, v] : req.headers) out += fmt::format("{}: {}\r\n", k, v);
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT")
        out += fmt::format("Content-Length: {}\r\n", req.body.size());
    if (close) out += "Connection: close\r\n";
    out += "\r\n";
    out += req.body;
    s.send_all(out.data(), out.size(), deadline);
}

}  // namespace meshperf::transport
