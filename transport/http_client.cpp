#include "transport/http_client.hpp"

#include "transport/tls.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <system_error>
#include <utility>

namespace meshperf::transport {
namespace {

constexpr std::size_t max_head_bytes = 64 * 1024;

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 60)) out += (std::isprint(static_cast<unsigned char>(c)) ? c : '.');
    return out;
}

/// Buffered reader over a stream. Each wait for data ends at the earlier of `timeout` from
/// its start and the whole request's `deadline` (clock::time_point::max(): none), so a
/// peer that drips a byte now and then cannot stretch a call past its deadline.
class reader {
public:
    reader(byte_stream& s, std::chrono::milliseconds timeout, clock::time_point deadline = clock::time_point::max())
        : s_(s), timeout_(timeout), deadline_(deadline) {}

    /// Sets the whole-request deadline (clock::time_point::max(): none).
    void set_deadline(clock::time_point deadline) { deadline_ = deadline; }

    /// Reads more bytes into buf_; false at end of stream.
    bool fill() {
        char tmp[16384];
        const auto n = s_.recv_some(tmp, sizeof tmp, std::min(clock::now() + timeout_, deadline_));
        if (n == 0) return false;
        buf_.append(tmp, n);
        return true;
    }

    http_response read_head() {
        std::size_t end;
        while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
            if (buf_.size() > max_head_bytes) throw http_protocol_error("response head larger than 64 KiB");
            const auto seen = std::min<std::size_t>(5, buf_.size());
            if (buf_.compare(0, seen, "HTTP/", seen) != 0)
                throw http_protocol_error(fmt::format("answered with non-HTTP bytes \"{}\"", printable(buf_)));
            if (!fill()) {
                if (buf_.empty()) throw http_protocol_error("closed the connection without answering");
                throw http_protocol_error(fmt::format("closed the connection mid-answer after \"{}\"", printable(buf_)));
            }
        }
        const std::string head = buf_.substr(0, end);
        buf_.erase(0, end + 4);
        http_response r;
        const auto first_eol = head.find("\r\n");
        const std::string status_line = head.substr(0, first_eol);
        // "HTTP/1.1 200 OK"
        if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12)
            throw http_protocol_error(fmt::format("answered with a bad status line \"{}\"", printable(status_line)));
        const auto code = std::string_view(status_line).substr(9, 3);
        auto [p, ec] = std::from_chars(code.data(), code.data() + 3, r.status);
        if (ec != std::errc() || p != code.data() + 3)
            throw http_protocol_error(fmt::format("answered with a bad status line \"{}\"", printable(status_line)));
        r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
        std::size_t pos = first_eol == std::string::npos ? head.size() : first_eol + 2;
        while (pos < head.size()) {
            auto eol = head.find("\r\n", pos);
            if (eol == std::string::npos) eol = head.size();
            const auto line = std::string_view(head).substr(pos, eol - pos);
            const auto colon = line.find(':');
            if (colon != std::string_view::npos)
                r.headers[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
            pos = eol + 2;
        }
        return r;
    }

    /// Streams the body to on_data according to the response head.
    void read_body(const http_response& head, const std::function<bool(std::string_view)>& on_data) {
        const auto te = head.headers.find("transfer-encoding");
        const auto cl = head.headers.find("content-length");
        if (te != head.headers.end() && lower(te->second).find("chunked") != std::string::npos) {
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
                if (len == 0) return;
                while (buf_.size() < len + 2)
                    if (!fill()) throw http_protocol_error("connection closed inside a chunk");
                if (!on_data(std::string_view(buf_).substr(0, len))) return;
                buf_.erase(0, len + 2);
            }
        } else if (cl != head.headers.end()) {
            std::size_t left = 0;
            std::from_chars(cl->second.data(), cl->second.data() + cl->second.size(), left);
            while (left > 0) {
                if (buf_.empty() && !fill()) throw http_protocol_error("connection closed before the body ended");
                const auto n = std::min(left, buf_.size());
                if (!on_data(std::string_view(buf_).substr(0, n))) return;
                buf_.erase(0, n);
                left -= n;
            }
        } else {
            while (true) {
                if (!buf_.empty()) {
                    if (!on_data(buf_)) return;
                    buf_.clear();
                }
                if (!fill()) return;
            }
        }
    }

    std::string take_leftover() { return std::exchange(buf_, {}); }

private:
    byte_stream& s_;
    std::chrono::milliseconds timeout_;
    clock::time_point deadline_;
    std::string buf_;
};

/// Time left until `deadline`, at least 1 ms (connect_tcp takes a duration).
std::chrono::milliseconds left_until(clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    return std::max(left, std::chrono::milliseconds(1));
}

/// Connects, and runs the TLS handshake when `tls` is given, both before `deadline`.
std::unique_ptr<byte_stream> open_stream(const endpoint_address& to, const tls_context* tls, clock::time_point deadline,
                                         const std::string& from = {}) {
    auto fd = connect_tcp(to, left_until(deadline), from);
    if (!tls) return make_plain_stream(std::move(fd));
    return tls_connect(std::move(fd), *tls, to.host, deadline);
}

void send_request(byte_stream& s, const endpoint_address& to, const http_request& req, bool upgrade_close,
                  clock::time_point deadline) {
    std::string out = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\n", req.method, req.target, to.to_string());
    for (const auto& [k, v] : req.headers) out += fmt::format("{}: {}\r\n", k, v);
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT")
        out += fmt::format("Content-Length: {}\r\n", req.body.size());
    if (upgrade_close) out += "Connection: close\r\n";
    out += "\r\n";
    out += req.body;
    s.send_all(out.data(), out.size(), deadline);
}

}  // namespace

http_response http_call(const endpoint_address& to, const http_request& req, std::chrono::milliseconds timeout,
                        const tls_context* tls) {
    // One deadline for the whole exchange: connect, TLS, send, head and body.
    const auto deadline = clock::now() + timeout;
    auto s = open_stream(to, tls, deadline);
    send_request(*s, to, req, true, deadline);
    reader rd(*s, timeout, deadline);
    auto r = rd.read_head();
    rd.read_body(r, [&](std::string_view d) { r.body.append(d); return r.body.size() < (64u << 20); });
    return r;
}

http_response http_stream(const endpoint_address& to, const http_request& req, std::chrono::milliseconds connect_timeout,
                          std::chrono::milliseconds idle_timeout, const std::function<bool(std::string_view)>& on_data,
                          const tls_context* tls, const std::function<void(const http_response&)>& on_head) {
    // Connect, send and the response head within connect_timeout; an error body as well.
    const auto head_deadline = clock::now() + connect_timeout;
    auto s = open_stream(to, tls, head_deadline);
    send_request(*s, to, req, true, head_deadline);
    reader rd(*s, idle_timeout, head_deadline);
    auto r = rd.read_head();
    if (r.status / 100 != 2) {
        rd.read_body(r, [&](std::string_view d) { r.body.append(d); return r.body.size() < (1u << 20); });
        return r;
    }
    if (on_head) on_head(r);
    // The body may go on for as long as the daemon keeps sending; only silence ends it.
    rd.set_deadline(clock::time_point::max());
    rd.read_body(r, on_data);
    return r;
}

upgraded_connection http_upgrade(const endpoint_address& to, const http_request& req, const std::string& protocol,
                                 std::chrono::milliseconds timeout, http_response& refused, const tls_context* tls,
                                 const std::string& from) {
    const auto deadline = clock::now() + timeout;
    auto s = open_stream(to, tls, deadline, from);
    http_request up = req;
    up.headers["Connection"] = "Upgrade";
    up.headers["Upgrade"] = protocol;
    reader rd(*s, timeout, deadline);
    http_response r;
    try {
        send_request(*s, to, up, false, deadline);
        r = rd.read_head();
        if (r.status != 101) {
            rd.read_body(r, [&](std::string_view d) { r.body.append(d); return r.body.size() < (1u << 20); });
            refused = std::move(r);
            return {};
        }
    } catch (const std::system_error& e) {
        if (e.code() != std::errc::timed_out) throw;
        throw answer_timeout(fmt::format("accepted the connection but did not answer the upgrade within {:.1f} s",
                                         std::chrono::duration<double>(timeout).count()));
    }
    if (lower(r.headers["upgrade"]) != lower(protocol))
        throw http_protocol_error(fmt::format("upgraded to \"{}\" instead of \"{}\"", r.headers["upgrade"], protocol));
    return {std::move(s), rd.take_leftover()};
}

}  // namespace meshperf::transport
