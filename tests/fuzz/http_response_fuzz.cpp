/// Fuzz target: the responses the keep-alive HTTP client reads (transport::http_connection
/// over transport::http_reader): status line and head, 1xx before the answer, the end of a
/// body (Content-Length, chunked with sizes, extensions and trailers, or the end of the
/// connection), "Connection: close", bytes left after a response, and whether the
/// connection may then carry the next request (issue 29: the matrix coordinator keeps one
/// connection per daemon, round after round).
///
/// Input: byte 0 chooses how the rest is served, the rest is up to 4 scripted answers
/// separated by `separator` ("\0next\0"; a 4th piece keeps any further separators).
///   bits 0-2  the server's write size: 0 = each answer in one write, else write_sizes[k-1]
///   bits 3-4  3: the server never closes an idle connection (a body ended by close then
///             waits out the 400 ms deadline); 1: stream() stops reading after the first
///             piece; and but for 3 the server closes a connection 3 ms after an answer
///             when no request followed (so a body ended by close ends)
///   bit 5     odd requests use http_connection::stream (as the client reads NDJSON), not call
///   bit 6     even requests use stream
///   bit 7     the connection has keep-alive off ("Connection: close" on every request)
///
/// Two layers, both checked against `frame`, a strict RFC 9112 reading of one answer
/// (written here, independent of the reader): complete (status, body, where it ends, whether
/// the server keeps the connection), incomplete (the body has not all arrived: no response
/// may be returned), or invalid (anything but a crash or a broken contract may happen).
///  1. http_reader alone over each answer in memory (a byte_stream that hands out the bytes
///     in the chosen write size, then end of stream): only http_protocol_error may escape;
///     a complete answer reads back with its status and exactly its body, and when the reader
///     says the body ended where it said (length_or_chunked), the bytes it left plus those
///     unread are exactly the bytes after the answer.
///  2. http_connection (keep-alive on unless bit 7) against a fake server on 127.0.0.1 in
///     this process (a thread per input) that answers the request for "/r/<i>" with answer
///     i, whatever connection it comes on, and tells the client when the whole answer is
///     written (so bytes after a response are always there before the next request goes).
///     Properties: only std::system_error and http_protocol_error escape (http_connection.hpp);
///     every call ends within its deadline (+ 1.5 s); a complete answer comes back with its
///     status and exactly its body (stream(): on_data's bytes), an incomplete one never comes
///     back as a response; error messages are valid UTF-8 (core::is_valid_utf8); and the
///     server never sees a request on a connection whose last answer left bytes, said close,
///     ran to the end of the connection, had trailers, was incomplete or invalid, or was
///     stopped by on_data, nor any second request with keep-alive off. So a response is never
///     taken from the bytes of a previous one.
#include "core/utf8.hpp"
#include "tests/fuzz/fuzz_checks.hpp"
#include "transport/http_connection.hpp"
#include "transport/http_reader.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace transport = meshperf::transport;
using meshperf::fuzz::property_failed;
using namespace std::chrono_literals;

constexpr std::string_view separator{"\0next\0", 6};
constexpr std::size_t max_answers = 4;
constexpr std::size_t write_sizes[] = {1, 2, 5, 13, 64, 512, 4096};
/// The client's deadlines (shorter when the server lingers: a body that waits for the end of
/// the connection then waits out the deadline), and how much later a call may end.
constexpr auto call_timeout = 1000ms;
constexpr auto linger_call_timeout = 400ms;
constexpr auto slack = 1500ms;
/// A connection idle this long after an answer is closed by the server (unless lingering).
/// Short, so a body that waits for the close ends soon; a client slower than this to send
/// its next request finds the connection closed and opens another, which is fine.
constexpr auto server_idle_close = 3ms;

// ---- the oracle: a strict reading of one answer ---------------------------------------

struct framing {
    enum kind_t { complete, incomplete, invalid } kind = invalid;
    int status = 0;
    std::string body;
    std::size_t size = 0;      ///< bytes in the answer
    std::size_t consumed = 0;  ///< bytes of the answer the response takes (complete)
    bool by_length = false;    ///< Content-Length, chunked or no body: ends where it says
    bool trailers = false;
    bool keep_alive = false;  ///< the server keeps the connection open after it
    bool body_arrived = false;  ///< incomplete only in the trailer section: every chunk arrived
};

bool is_tchar(unsigned char c) {
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}
bool is_field_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// Reads header lines from `s` at `pos` up to and including the empty line. Returns
/// incomplete, invalid or complete (then `pos` is past the empty line).
framing::kind_t read_fields(std::string_view s, std::size_t& pos, std::multimap<std::string, std::string>& fields) {
    while (true) {
        const auto eol = s.find("\r\n", pos);
        if (eol == std::string_view::npos) return framing::incomplete;
        const auto line = s.substr(pos, eol - pos);
        pos = eol + 2;
        if (line.empty()) return framing::complete;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) return framing::invalid;
        for (std::size_t i = 0; i < colon; ++i)
            if (!is_tchar(static_cast<unsigned char>(line[i]))) return framing::invalid;
        for (std::size_t i = colon + 1; i < line.size(); ++i)
            if (!is_field_char(static_cast<unsigned char>(line[i]))) return framing::invalid;
        fields.emplace(lower(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
    }
}

/// The answer `s` as RFC 9112 frames it for a GET, strictly. `closed_after`: the server
/// closes the connection after these bytes (so a body without length ends with them).
framing frame(std::string_view s, bool closed_after) {
    framing f;
    f.size = s.size();
    std::size_t pos = 0;
    std::multimap<std::string, std::string> h;
    int minor = 1;
    while (true) {  // 1xx answers before the final one
        if (s.find("\r\n\r\n", pos) == std::string_view::npos) {
            f.kind = framing::incomplete;  // no head can be read from these bytes
            return f;
        }
        const auto line_end = s.find("\r\n", pos);
        const auto line = s.substr(pos, line_end - pos);
        if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') || line[8] != ' ')
            return f;
        if (!std::isdigit(static_cast<unsigned char>(line[9])) || !std::isdigit(static_cast<unsigned char>(line[10])) ||
            !std::isdigit(static_cast<unsigned char>(line[11])))
            return f;
        if (line.size() > 12 && line[12] != ' ') return f;
        for (char c : line.substr(std::min<std::size_t>(13, line.size())))
            if (!is_field_char(static_cast<unsigned char>(c))) return f;
        minor = line[7] - '0';
        f.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
        if (f.status < 100 || f.status > 599 || f.status == 101) return f;  // 101: nothing asked to switch
        pos = line_end + 2;
        h.clear();
        const auto k = read_fields(s, pos, h);
        if (k != framing::complete) {
            f.kind = k;
            return f;
        }
        if (f.status >= 200) break;
    }
    // Whether the server keeps the connection: every Connection field's tokens.
    bool close = false, keep = false;
    for (auto [it, end] = h.equal_range("connection"); it != end; ++it) {
        std::string_view v = it->second;
        while (!v.empty()) {
            const auto comma = v.find(',');
            const auto token = lower(trim(v.substr(0, comma)));
            close |= token == "close";
            keep |= token == "keep-alive";
            v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
        }
    }
    f.keep_alive = !close && (minor == 1 || keep);
    const auto te = h.count("transfer-encoding");
    const auto cl = h.count("content-length");
    if (f.status == 204 || f.status == 304) {  // never a body
        f.kind = framing::complete;
        f.by_length = true;
        f.consumed = pos;
        return f;
    }
    if (te > 0) {
        if (te > 1 || cl > 0 || lower(h.find("transfer-encoding")->second) != "chunked") return f;
        while (true) {
            const auto eol = s.find("\r\n", pos);
            const auto line = s.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
            std::size_t digits = 0;
            while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) ++digits;
            if (eol == std::string_view::npos) {
                // What has come so far may still be a chunk size line.
                f.kind = digits == line.size() && line.size() <= 32 ? framing::incomplete : framing::invalid;
                return f;
            }
            if (digits == 0 || digits > 16 || line.size() > 1024) return f;
            if (digits < line.size()) {
                if (line[digits] != ';') return f;
                for (char c : line.substr(digits + 1))
                    if (!is_field_char(static_cast<unsigned char>(c))) return f;
            }
            const auto size = std::stoull(std::string(line.substr(0, digits)), nullptr, 16);
            pos = eol + 2;
            if (size == 0) {
                std::multimap<std::string, std::string> trailer;
                const auto before = pos;
                const auto k = read_fields(s, pos, trailer);
                f.trailers = pos > before + 2 || (k != framing::complete && pos > before);
                if (k == framing::incomplete) f.body_arrived = true;
                f.kind = k;
                f.by_length = true;
                f.consumed = pos;
                return f;
            }
            if (size > s.size() - pos || s.size() - pos - size < 2) {
                // Not all here: a chunk's bytes that are here must still be followed by CRLF.
                if (size < s.size() - pos && s.substr(pos + size) != std::string_view("\r\n").substr(0, s.size() - pos - size))
                    return f;
                f.kind = framing::incomplete;
                return f;
            }
            if (s.substr(pos + size, 2) != "\r\n") return f;
            f.body.append(s.substr(pos, size));
            pos += size + 2;
        }
    }
    if (cl > 0) {
        if (cl > 1) return f;
        const auto& v = h.find("content-length")->second;
        if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return f;
        const auto n = std::stoull(v);
        if (n > s.size() - pos) {
            f.kind = framing::incomplete;
            return f;
        }
        f.kind = framing::complete;
        f.by_length = true;
        f.body = std::string(s.substr(pos, n));
        f.consumed = pos + n;
        return f;
    }
    if (!closed_after) {
        f.kind = framing::incomplete;
        return f;
    }
    f.kind = framing::complete;
    f.keep_alive = false;
    f.body = std::string(s.substr(pos));
    f.consumed = s.size();
    return f;
}

/// Whether a client may send another request on the connection after this answer.
bool reusable(const framing& f) {
    return f.kind == framing::complete && f.by_length && !f.trailers && f.keep_alive && f.consumed == f.size;
}

void check_message(const char* what) {
    if (!meshperf::core::is_valid_utf8(what)) {
        std::fprintf(stderr, "error message: %.300s\n", what);
        property_failed("an error message of the HTTP client is not valid UTF-8");
    }
}

[[noreturn]] void mismatch(const char* what, std::string_view answer, const framing& f, int status, std::string_view body) {
    std::fprintf(stderr, "answer (%zu bytes): %.400s\nexpected status %d body (%zu bytes) %.200s\ngot status %d body (%zu bytes) %.200s\n",
                 answer.size(), std::string(answer).c_str(), f.status, f.body.size(), f.body.c_str(), status, body.size(),
                 std::string(body).c_str());
    property_failed(what);
}

// ---- layer 1: http_reader over bytes in memory ----------------------------------------

class memory_stream : public transport::byte_stream {
public:
    memory_stream(std::string_view bytes, std::size_t piece) : bytes_(bytes), piece_(piece ? piece : bytes.size() + 1) {}
    void send_all(const void*, std::size_t, transport::clock::time_point) override {}
    std::size_t recv_some(void* data, std::size_t len, transport::clock::time_point) override {
        const auto n = std::min({len, piece_, bytes_.size() - at_});
        std::copy_n(bytes_.data() + at_, n, static_cast<char*>(data));
        at_ += n;
        return n;
    }
    int fd() const override { return -1; }
    bool encrypted() const override { return false; }
    transport::socket_fd release_socket() override { throw std::logic_error("memory stream"); }
    std::string_view unread() const { return bytes_.substr(at_); }

private:
    std::string_view bytes_;
    std::size_t piece_;
    std::size_t at_ = 0;
};

void read_in_memory(std::string_view answer, std::size_t piece) {
    const auto f = frame(answer, true);
    memory_stream s(answer, piece);
    transport::http_reader rd(s, 1000ms);
    transport::http_response r;
    transport::body_end end;
    try {
        r = rd.read_head();
        end = rd.read_body(r, [&](std::string_view d) {
            r.body.append(d);
            return true;
        });
    } catch (const transport::http_protocol_error& e) {
        check_message(e.what());
        if (f.kind == framing::complete) mismatch("http_reader refused a well-framed answer", answer, f, -1, e.what());
        return;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "http_reader threw: %s\n", e.what());
        property_failed("http_reader threw something other than http_protocol_error");
    }
    if (f.kind == framing::incomplete && !(f.body_arrived && end == transport::body_end::stopped))
        mismatch("http_reader returned a response whose body had not all arrived", answer, f, r.status, r.body);
    if (f.kind != framing::complete && !(f.kind == framing::incomplete && f.body_arrived)) return;
    if (r.status != f.status || r.body != f.body)
        mismatch("http_reader's response is not the answer's status and framed body", answer, f, r.status, r.body);
    if (f.by_length && end == transport::body_end::connection_closed)
        mismatch("http_reader read a body with a length to the end of the connection", answer, f, r.status, r.body);
    if (end == transport::body_end::length_or_chunked) {
        if (!f.by_length || f.trailers)
            mismatch("http_reader says a body ended where it said, but it has no length or had trailers", answer, f, r.status,
                     r.body);
        if (rd.take_leftover() + std::string(s.unread()) != answer.substr(f.consumed))
            mismatch("the bytes http_reader left after a response are not those after the answer", answer, f, r.status, r.body);
    }
}

// ---- layer 2: http_connection against a fake server -----------------------------------

struct listener {
    int fd = -1;
    std::uint16_t port = 0;
};

const listener& the_listener() {
    static const listener l = [] {
        std::signal(SIGPIPE, SIG_IGN);
        listener made;
        made.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (made.fd < 0 || ::bind(made.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(made.fd, 16) != 0 ||
            ::getsockname(made.fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            property_failed("cannot listen on 127.0.0.1 for the fake server");
        made.port = ntohs(a.sin_port);
        return made;
    }();
    return l;
}

/// What the client did with request i (read by the server to judge a reuse).
struct plan {
    std::vector<std::string_view> answers;
    std::vector<framing> frames;  ///< each answer as the connection sees it
    std::vector<bool> stopped;    ///< request i is a stream() whose on_data returns false
    std::atomic<bool> did_stop[max_answers] = {};  ///< on_data did return false for request i
    std::size_t piece = 0;
    bool linger = false;
    bool keep_alive = true;
    std::chrono::milliseconds timeout = call_timeout;
};

class fake_server {
public:
    explicit fake_server(const plan& p) : p_(p) {
        if (::pipe2(wake_, O_CLOEXEC) != 0) property_failed("cannot make a pipe");
        thread_ = std::thread([this] { serve(); });
    }
    ~fake_server() {
        done_ = true;
        (void)!::write(wake_[1], "x", 1);
        thread_.join();
        ::close(wake_[0]);
        ::close(wake_[1]);
    }
    /// Waits (1 s at most) until answer i is wholly written.
    void wait_answered(std::size_t i) {
        std::unique_lock lock(m_);
        cv_.wait_for(lock, 1s, [&] { return answered_ > i; });
    }

private:
    struct conn {
        int fd;
        std::string in;
        int last = -1;  ///< the index of the last answer written on it
        transport::clock::time_point answered_at{};
    };

    void answer(conn& c, std::size_t i) {
        if (c.last >= 0) {
            const auto& prev = p_.frames[static_cast<std::size_t>(c.last)];
            if (!p_.keep_alive) property_failed("a connection with keep-alive off carried a second request");
            // After an answer the oracle calls invalid, what the reader made of it is open:
            // the next answer's own check (exactly its status and body) catches a mix-up.
            if ((prev.kind != framing::invalid && !reusable(prev)) || p_.did_stop[c.last]) {
                std::fprintf(stderr, "answer %d (%zu bytes): %.400s\nthen request %zu on the same connection\n", c.last,
                             p_.answers[static_cast<std::size_t>(c.last)].size(),
                             std::string(p_.answers[static_cast<std::size_t>(c.last)]).c_str(), i);
                property_failed("the client reused a connection whose last answer was not cleanly framed, left bytes, "
                                "said close or was stopped");
            }
        }
        const auto a = p_.answers[i];
        const auto piece = p_.piece ? p_.piece : a.size() + 1;
        for (std::size_t at = 0; at < a.size();) {
            const auto n = ::send(c.fd, a.data() + at, std::min(piece, a.size() - at), MSG_NOSIGNAL);
            if (n <= 0) break;
            at += static_cast<std::size_t>(n);
        }
        c.last = static_cast<int>(i);
        c.answered_at = transport::clock::now();
        std::lock_guard lock(m_);
        answered_ = std::max(answered_, i + 1);
        cv_.notify_all();
    }

    /// Answers every whole request head in c.in; false when the connection is to be closed.
    bool serve_requests(conn& c) {
        std::size_t end;
        while ((end = c.in.find("\r\n\r\n")) != std::string::npos) {
            const std::string head = c.in.substr(0, end + 2);
            c.in.erase(0, end + 4);
            const bool said_close = head.find("\r\nConnection: close\r\n") != std::string::npos;
            if (said_close == p_.keep_alive) property_failed("Connection: close sent with keep-alive on, or missing with it off");
            std::size_t i = 0;
            if (std::sscanf(head.c_str(), "GET /r/%zu HTTP/1.1\r\n", &i) != 1 || i >= p_.answers.size())
                property_failed("the fake server got a request it did not expect");
            answer(c, i);
        }
        return true;
    }

    void serve() {
        const int lfd = the_listener().fd;
        std::vector<conn> conns;
        while (!done_) {
            std::vector<pollfd> fds{{lfd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
            for (const auto& c : conns) fds.push_back({c.fd, POLLIN, 0});
            int wait_ms = 1000;  // until the first idle connection is due to be closed
            for (const auto& c : conns)
                if (!p_.linger && c.last >= 0) {
                    const auto due = c.answered_at + server_idle_close - transport::clock::now();
                    wait_ms = std::min<int>(
                        wait_ms, static_cast<int>(std::max<long long>(
                                     0, std::chrono::ceil<std::chrono::milliseconds>(due).count())));
                }
            ::poll(fds.data(), fds.size(), wait_ms);
            for (std::size_t k = conns.size(); k-- > 0;) {
                auto& c = conns[k];
                bool keep = true;
                if (fds[k + 2].revents) {
                    char buf[4096];
                    const auto n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
                    if (n > 0) {
                        c.in.append(buf, static_cast<std::size_t>(n));
                        keep = serve_requests(c);
                    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                        keep = false;
                    }
                }
                if (keep && !p_.linger && c.last >= 0 && c.in.empty() &&
                    transport::clock::now() - c.answered_at > server_idle_close)
                    keep = false;
                if (!keep) {
                    ::close(c.fd);
                    conns.erase(conns.begin() + static_cast<std::ptrdiff_t>(k));
                }
            }
            if (fds[0].revents & POLLIN) {
                const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0) conns.push_back({fd, {}, -1, {}});
            }
        }
        for (const auto& c : conns) ::close(c.fd);
    }

    const plan& p_;
    std::atomic<bool> done_{false};
    int wake_[2] = {-1, -1};  ///< written when done_ is set
    std::mutex m_;
    std::condition_variable cv_;
    std::size_t answered_ = 0;
    std::thread thread_;
};

/// One request through the connection, its properties checked.
void exchange(transport::http_connection& c, plan& p, std::size_t i, bool use_stream) {
    const auto& f = p.frames[i];
    const auto answer = p.answers[i];
    transport::http_request req;
    req.target = "/r/" + std::to_string(i);
    const auto t0 = transport::clock::now();
    transport::http_response r;
    std::string got;  // the body as the caller sees it
    bool stopped_early = false;
    try {
        if (use_stream) {
            std::string pending;
            std::size_t lines = 0;
            r = c.stream(
                req, p.timeout, p.timeout,
                [&](std::string_view d) {
                    got.append(d);
                    // As daemon_client::post_streaming reads NDJSON events.
                    pending.append(d);
                    std::size_t nl;
                    while ((nl = pending.find('\n')) != std::string::npos) {
                        const auto line = pending.substr(0, nl);
                        pending.erase(0, nl + 1);
                        const auto ev = nlohmann::json::parse(line, nullptr, false);
                        lines += !ev.is_discarded() && ev.is_object();
                    }
                    if (p.stopped[i]) stopped_early = p.did_stop[i] = true;
                    return !p.stopped[i];
                },
                {});
            if (r.status / 100 != 2) got = r.body;
        } else {
            r = c.call(req, p.timeout);
            got = r.body;
        }
    } catch (const transport::http_protocol_error& e) {
        check_message(e.what());
        r.status = -1;
    } catch (const std::system_error& e) {
        check_message(e.what());
        r.status = -2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "http_connection threw: %s\n", e.what());
        property_failed("http_connection threw something other than std::system_error or http_protocol_error");
    }
    const auto took = transport::clock::now() - t0;
    const auto bound = (use_stream ? 2 * p.timeout : p.timeout) + slack;
    if (took > bound) {
        std::fprintf(stderr, "request %zu took %lld ms\n", i,
                     static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
        property_failed("an http_connection call ran past its deadline");
    }
    if (r.status < 0) {
        if (f.kind == framing::complete && !p.stopped[i])
            mismatch("http_connection failed on a well-framed answer", answer, f, r.status, "");
        return;
    }
    if (f.kind == framing::invalid) return;
    if (f.kind == framing::incomplete && !f.body_arrived)
        mismatch("http_connection returned a response whose body had not all arrived", answer, f, r.status, got);
    if (r.status != f.status) mismatch("http_connection's response is not the answer's status", answer, f, r.status, got);
    if (stopped_early ? f.body.compare(0, got.size(), got) != 0 : got != f.body)
        mismatch("http_connection's body is not exactly the answer's framed body", answer, f, r.status, got);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const auto control = data[0];
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    plan p;
    while (p.answers.size() + 1 < max_answers) {
        const auto at = rest.find(separator);
        if (at == std::string_view::npos) break;
        p.answers.push_back(rest.substr(0, at));
        rest.remove_prefix(at + separator.size());
    }
    p.answers.push_back(rest);
    p.piece = (control & 7) ? write_sizes[(control & 7) - 1] : 0;
    p.linger = (control & 0x18) == 0x18;
    if (p.linger) p.timeout = linger_call_timeout;
    const bool stop_streams = (control & 0x18) == 0x08;
    p.keep_alive = !(control & 0x80);

    for (const auto a : p.answers) read_in_memory(a, p.piece);

    std::vector<bool> use_stream;
    for (std::size_t i = 0; i < p.answers.size(); ++i) {
        p.frames.push_back(frame(p.answers[i], !p.linger));
        use_stream.push_back((i % 2 == 1 && (control & 0x20)) || (i % 2 == 0 && (control & 0x40)));
        p.stopped.push_back(use_stream.back() && stop_streams);
    }
    const auto& l = the_listener();
    fake_server server(p);
    transport::http_connection c(transport::endpoint_address{"127.0.0.1", l.port}, nullptr, p.keep_alive);
    for (std::size_t i = 0; i < p.answers.size(); ++i) {
        if (i > 0) server.wait_answered(i - 1);
        exchange(c, p, i, use_stream[i]);
    }
    return 0;
}
