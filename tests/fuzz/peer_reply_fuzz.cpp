/// Fuzz target: what an initiating meshperfd reads from a peer's reply to its session upgrade
/// (issue 25, attack 2: a peer answering "HTTP/1.1 404 \xe9t\xe9" put those bytes into the
/// run's error text, and storing the run threw nlohmann's type_error.316: SIGABRT).
///
/// The input is the peer's whole answer. A fake peer in this process (a listening socket on
/// 127.0.0.1, one thread per input) reads the upgrade request up to its blank line, writes
/// the input, and closes. The daemon's own code does the rest: daemon::try_open_session
/// (daemon/session/session_opening.cpp) sends the upgrade and reads the reply through
/// transport::http_upgrade (transport/http_client.cpp: status line, headers, a refusal's
/// body, chunked or by length), daemon::refusal_message (daemon/session/peer_upgrade.cpp)
/// reads the refusal's JSON "error", and daemon::refusal_error builds the run's error text.
///
/// Properties: try_open_session throws nothing but session_error (its documented contract);
/// every text that reaches the run document (the session_error's message, the refusal's
/// sentence and reason phrase, refusal_error's message) is valid UTF-8 (core::is_valid_utf8)
/// and nlohmann::json's dump() of it does not throw (the daemon dumps every run it stores).
/// An upgrade the input accepts (a 101 with the right Upgrade) is closed at once: what a
/// session reads after that is frame_decoder's input.
///
/// Nothing leaves loopback; one connection per input, answered at once, so ~thousands/s.
#include "core/utf8.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/session_opening.hpp"
#include "tests/fuzz/fuzz_checks.hpp"
#include "transport/socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace {

namespace daemon = meshperf::daemon;
namespace transport = meshperf::transport;
using meshperf::fuzz::property_failed;

/// The fake peer's listening socket, made once for the process.
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
            property_failed("cannot listen on 127.0.0.1 for the fake peer");
        made.port = ntohs(a.sin_port);
        return made;
    }();
    return l;
}

daemon::daemon_context& the_context() {
    static daemon::daemon_context* ctx = new daemon::daemon_context;  // never destroyed, as the daemon's
    return *ctx;
}

/// The fake peer's side of one exchange: accept (5 s at most), read the request head (up
/// to its blank line, 64 KiB, or 5 s), answer `reply`, close.
void answer_once(int listen_fd, std::string_view reply) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return;  // the client never connected: try_open_session says why
    const int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 5000) != 1) break;
        const auto n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, static_cast<std::size_t>(n));
    }
    for (std::size_t at = 0; at < reply.size();) {
        const auto n = ::send(c, reply.data() + at, reply.size() - at, MSG_NOSIGNAL);
        if (n <= 0) break;  // the client gave up reading (a head over 64 KiB): fine
        at += static_cast<std::size_t>(n);
    }
    ::shutdown(c, SHUT_WR);
    ::close(c);
}

/// The property on every text that enters the run document.
void check_text(const std::string& text, const char* what) {
    if (!meshperf::core::is_valid_utf8(text)) {
        std::fprintf(stderr, "%s is not valid UTF-8: %.200s\n", what, text.c_str());
        property_failed("text from a peer's reply reaches the run document as invalid UTF-8");
    }
    try {
        (void)nlohmann::json{{"error", text}}.dump();
    } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "%s: %s\n", what, e.what());
        property_failed("the run document cannot be dumped: nlohmann::json threw on text from a peer's reply");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto& l = the_listener();
    auto& ctx = the_context();
    const std::string_view reply(reinterpret_cast<const char*>(data), size);
    std::thread peer([&] { answer_once(l.fd, reply); });
    const transport::endpoint_address address{"127.0.0.1", l.port};
    try {
        auto attempt = daemon::try_open_session(ctx, address);
        if (!attempt.channel) {
            check_text(attempt.why, "the refusal's sentence");
            check_text(attempt.reason, "the refusal's reason phrase");
            if (!attempt.busy()) check_text(daemon::refusal_error(address, attempt).what(), "refusal_error");
        }
    } catch (const daemon::session_error& e) {
        check_text(e.what(), "the session_error of try_open_session");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "try_open_session threw %s\n", e.what());
        peer.join();
        property_failed("try_open_session threw something other than session_error");
    }
    peer.join();
    return 0;
}
