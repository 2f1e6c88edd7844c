#include "transport/socket.hpp"

#include "core/error.hpp"
#include "transport/connect_policy.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace meshperf::transport {
namespace {

[[noreturn]] void throw_errno(int err, const std::string& what) {
    throw std::system_error(err, std::generic_category(), what);
}

int poll_ms(clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return 0;
    return left > 1'000'000 ? 1'000'000 : static_cast<int>(left) + 1;
}

bool wait_for(int fd, short events, clock::time_point deadline) {
    while (true) {
        pollfd p{fd, events, 0};
        const int timeout = poll_ms(deadline);
        const int r = ::poll(&p, 1, timeout);
        if (r > 0) return true;
        if (r == 0) {
            if (clock::now() >= deadline) return false;
            continue;
        }
        if (errno != EINTR) throw_errno(errno, "poll");
    }
}

std::string ip_of(const sockaddr_storage& ss) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
    else if (ss.ss_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
    return buf;
}

}  // namespace

namespace {

class resolve_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "resolve"; }
    std::string message(int eai) const override { return ::gai_strerror(eai); }
};

}  // namespace

const std::error_category& resolve_category() noexcept {
    static const resolve_category_impl category;
    return category;
}

resolve_error::resolve_error(std::string host, int eai_code)
    : std::system_error(eai_code, resolve_category(), fmt::format("cannot resolve {}", host)), host_(std::move(host)) {}

std::string endpoint_address::to_string() const {
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

endpoint_address parse_endpoint(std::string_view text, std::uint16_t default_port_) {
    endpoint_address ep;
    ep.port = default_port_;
    std::string_view host = text, port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) throw core::spec_error(fmt::format("address '{}' has an unclosed '['", text));
        host = text.substr(1, close - 1);
        const auto rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') throw core::spec_error(fmt::format("address '{}': expected ':PORT' after ']'", text));
            port = rest.substr(1);
        }
    } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos && text.find(':') == colon) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (host.empty()) throw core::spec_error(fmt::format("address '{}' has no host (use HOST[:PORT])", text));
    // A bracket or a blank inside the host would not read back from to_string's spelling.
    if (host.find_first_of("[] \t\r\n") != std::string_view::npos)
        throw core::spec_error(fmt::format("address '{}' has a bad host '{}' (use HOST[:PORT], [IPV6]:PORT for IPv6 literals)",
                                           text, host));
    if (!port.empty() || (text.size() && text.back() == ':')) {
        unsigned v = 0;
        auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
        if (port.empty() || ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
            throw core::spec_error(fmt::format("address '{}' has a bad port '{}' (use 1..65535)", text, port));
        ep.port = static_cast<std::uint16_t>(v);
    }
    ep.host = std::string(host);
    return ep;
}

socket_fd& socket_fd::operator=(socket_fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
}
socket_fd::~socket_fd() { reset(); }
void socket_fd::reset(int fd) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

namespace {

/// Binds `fd` of `family` to the local IP `from` (port 0); false when `from` is of the other family.
bool bind_local(int fd, int family, const std::string& from) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (family == AF_INET) {
        auto* a = reinterpret_cast<sockaddr_in*>(&ss);
        if (::inet_pton(AF_INET, from.c_str(), &a->sin_addr) != 1) return false;
        a->sin_family = AF_INET;
        len = sizeof *a;
    } else if (family == AF_INET6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
        if (::inet_pton(AF_INET6, from.c_str(), &a->sin6_addr) != 1) return false;
        a->sin6_family = AF_INET6;
        len = sizeof *a;
    } else {
        return false;
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) throw_errno(errno, fmt::format("bind to {}", from));
    return true;
}

/// The connect policy's reason to refuse this resolved address (transport/connect_policy.hpp).
std::optional<std::string> refusal_of(const addrinfo* ai) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ai->ai_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr, text, sizeof text);
    else if (ai->ai_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr, text, sizeof text);
    else
        return "not an IPv4 or IPv6 address";
    return connect_refusal(text);
}

}  // namespace

std::vector<std::string> numeric_addresses(const std::string& host) noexcept {
    std::vector<std::string> out;
    try {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return out;
        for (auto* ai = res; ai; ai = ai->ai_next) {
            char text[NI_MAXHOST] = {};
            if (::getnameinfo(ai->ai_addr, ai->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) out.emplace_back(text);
        }
        ::freeaddrinfo(res);
    } catch (...) {
        out.clear();
    }
    return out;
}

socket_fd connect_tcp(const endpoint_address& to, std::chrono::milliseconds timeout, const std::string& from) {
    const auto deadline = clock::now() + timeout;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const auto port = std::to_string(to.port);
    if (int rc = ::getaddrinfo(to.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
        // EAI_SYSTEM carries its reason in errno; keep it rather than "System error".
        if (rc == EAI_SYSTEM) throw_errno(errno, fmt::format("resolve {}", to.host));
        throw resolve_error(to.host, rc);
    }
    int last_err = ECONNREFUSED;
    std::string refused;  // the policy's reason, when it refused an address
    bool tried = false;   // whether the policy let any address through
    socket_fd result;
    for (auto* ai = res; ai && !result; ai = ai->ai_next) {
        if (auto why = refusal_of(ai)) {
            if (refused.empty()) refused = std::move(*why);
            continue;
        }
        tried = true;
        socket_fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (!s) { last_err = errno; continue; }
        if (!from.empty() && !bind_local(s.get(), ai->ai_family, from)) { last_err = EAFNOSUPPORT; continue; }
        if (::connect(s.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
            if (errno != EINPROGRESS) { last_err = errno; continue; }
            if (!wait_for(s.get(), POLLOUT, deadline)) { last_err = ETIMEDOUT; continue; }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) { last_err = err; continue; }
        }
        set_blocking(s.get(), true);
        result = std::move(s);
    }
    ::freeaddrinfo(res);
    if (!result && !tried && !refused.empty())
        throw std::system_error(EACCES, std::generic_category(),
                                fmt::format("connect to {} refused before any packet: {}", to.to_string(), refused));
    if (!result) throw_errno(last_err, fmt::format("connect to {}", to.to_string()));
    return result;
}

void send_all(int fd, const void* data, std::size_t len, clock::time_point deadline) {
    const auto* p = static_cast<const char*>(data);
    while (len > 0) {
        const auto n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) { p += n; len -= static_cast<std::size_t>(n); continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_for(fd, POLLOUT, deadline)) throw_errno(ETIMEDOUT, "send");
            continue;
        }
        throw_errno(errno, "send");
    }
}

std::size_t recv_some(int fd, void* data, std::size_t len, clock::time_point deadline) {
    while (true) {
        const auto n = ::recv(fd, data, len, MSG_DONTWAIT);
        if (n >= 0) return static_cast<std::size_t>(n);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_for(fd, POLLIN, deadline)) throw_errno(ETIMEDOUT, "receive");
            continue;
        }
        throw_errno(errno, "receive");
    }
}

bool wait_readable(int fd, clock::time_point deadline) { return wait_for(fd, POLLIN, deadline); }
bool wait_writable(int fd, clock::time_point deadline) { return wait_for(fd, POLLOUT, deadline); }

void set_blocking(int fd, bool blocking) {
    const int flags = ::fcntl(fd, F_GETFL, 0);
    if (flags < 0) throw_errno(errno, "fcntl(F_GETFL)");
    const int want = blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK);
    if (want != flags && ::fcntl(fd, F_SETFL, want) != 0) throw_errno(errno, "fcntl(F_SETFL)");
}

void set_nodelay(int fd, bool on) {
    int v = on ? 1 : 0;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0) throw_errno(errno, "setsockopt(TCP_NODELAY)");
}

void set_buffer_sizes(int fd, std::uint64_t bytes) {
    int v = static_cast<int>(bytes);
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v) != 0) throw_errno(errno, "setsockopt(SO_SNDBUF)");
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) != 0) throw_errno(errno, "setsockopt(SO_RCVBUF)");
}

bool try_set_busy_poll(int fd, int usec) {
    return ::setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof usec) == 0;
}

std::string local_ip(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
    return ip_of(ss);
}

std::string interface_for_address(const std::string& ip) {
    ifaddrs* list = nullptr;
    if (ip.empty() || ::getifaddrs(&list) != 0) return {};
    std::string name;
    for (const ifaddrs* a = list; a && name.empty(); a = a->ifa_next) {
        if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6)) continue;
        sockaddr_storage ss{};
        std::memcpy(&ss, a->ifa_addr, a->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        if (ip_of(ss) == ip) name = a->ifa_name;
    }
    ::freeifaddrs(list);
    return name;
}

bool peer_has_closed(int fd) {
    if (fd < 0) return false;
    pollfd p{fd, static_cast<short>(POLLRDHUP), 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

std::string peer_ip(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
    return ip_of(ss);
}

}  // namespace meshperf::transport
