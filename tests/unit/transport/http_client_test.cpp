// transport::http_connection's one-request calls and streams against a scripted loopback server: a call ends by
// its one deadline however the server drips its answer, and a stream ends on silence but
// may last as long as bytes keep coming (issue 26: the CLI never hangs on a daemon).
#include "transport/http_connection.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <functional>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace http_client_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::transport;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// A one-connection HTTP server on 127.0.0.1: accepts (waiting at most 5 s), reads the
/// request head, then runs `script` on the connection and closes it.
class scripted_server {
public:
    explicit scripted_server(std::function<void(int fd)> script) {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::listen(listen_fd_, 1) == 0);
        socklen_t len = sizeof a;
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this, script = std::move(script)] {
            pollfd p{listen_fd_, POLLIN, 0};
            if (::poll(&p, 1, 5000) != 1) return;
            const int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) return;
            std::string head;
            char c;
            while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head += c;
            script(fd);
            ::close(fd);
        });
    }
    ~scripted_server() {
        thread_.join();
        ::close(listen_fd_);
    }
    endpoint_address address() const { return parse_endpoint("127.0.0.1:" + std::to_string(port_)); }

private:
    int listen_fd_ = -1;
    unsigned port_ = 0;
    std::thread thread_;
};

void send_text(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

/// Sends `s` a byte every `every`, for at most `at_most` in all.
void drip(int fd, const std::string& s, std::chrono::milliseconds every, std::chrono::milliseconds at_most) {
    const auto end = steady::now() + at_most;
    for (char c : s) {
        if (steady::now() >= end) return;
        if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1) return;
        std::this_thread::sleep_for(every);
    }
}

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// Runs `f`, which must throw std::system_error ETIMEDOUT; returns the seconds it took.
template <class F>
double timed_out_after(F f) {
    const auto t0 = steady::now();
    bool timed_out = false;
    try {
        f();
    } catch (const std::system_error& e) {
        timed_out = e.code() == std::errc::timed_out;
        INFO(e.what());
    }
    CHECK(timed_out);
    return seconds_since(t0);
}

}  // namespace

TEST_SUITE("http_client") {

TEST_CASE("one-request call: a server that accepts and never answers ends the call at its deadline") {
    scripted_server server([](int) { std::this_thread::sleep_for(1500ms); });
    const double took = timed_out_after([&] { http_connection(server.address(), nullptr, false).call(http_request{}, 300ms); });
    CHECK(took < 0.8);
}

TEST_CASE("one-request call: a body dripped a byte every 50 ms cannot stretch the call past its deadline") {
    // Each byte arrives well within the 400 ms wait: a per-wait timeout alone would read on
    // until the server gives up (2 s) and fail with "closed before the body ended".
    scripted_server server([](int fd) {
        send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
        drip(fd, std::string(1000, 'x'), 50ms, 2000ms);
    });
    const double took = timed_out_after([&] { http_connection(server.address(), nullptr, false).call(http_request{}, 400ms); });
    CHECK(took < 1.0);
}

TEST_CASE("one-request stream: a body that keeps coming may outlast the head's deadline; silence ends it") {
    SUBCASE("events every 50 ms for 1 s, then the end: read whole, no timeout") {
        scripted_server server([](int fd) {
            send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            for (int i = 0; i < 20; ++i) {
                send_text(fd, "2\r\nx\n\r\n");
                std::this_thread::sleep_for(50ms);
            }
            send_text(fd, "0\r\n\r\n");
        });
        std::string body;
        bool saw_head = false;
        const auto head = http_connection(server.address(), nullptr, false).stream(http_request{}, 300ms, 300ms,
                                      [&](std::string_view d) { body.append(d); return true; },
                                      [&](const http_response& h) { saw_head = h.status == 200; });
        CHECK(head.status == 200);
        CHECK(saw_head);
        std::string expected;
        for (int i = 0; i < 20; ++i) expected += "x\n";
        CHECK(body == expected);
    }
    SUBCASE("a head, one event, then silence: ETIMEDOUT after the idle limit") {
        scripted_server server([](int fd) {
            send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nx\n\r\n");
            std::this_thread::sleep_for(1500ms);
        });
        std::string body;
        const double took = timed_out_after([&] {
            http_connection(server.address(), nullptr, false)
                .stream(http_request{}, 2000ms, 300ms, [&](std::string_view d) { body.append(d); return true; });
        });
        CHECK(body == "x\n");
        CHECK(took < 0.8);
    }
}

}  // TEST_SUITE

}  // namespace http_client_test
