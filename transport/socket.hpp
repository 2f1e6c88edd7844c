#pragma once
/// Blocking TCP sockets on raw descriptors, with deadlines: what the peer session, the data
/// streams and the CLI's HTTP client share. Setup errors throw std::system_error naming the
/// operation and the address; hot loops use the descriptor directly.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <string_view>
#include <system_error>

namespace meshperf::transport {

/// A host and port, as the user wrote them ("node7:7470", "[::1]:7470", "10.0.0.2").
struct endpoint_address {
    std::string host;
    std::uint16_t port = 0;
    /// "host:port", with brackets around IPv6 literals.
    std::string to_string() const;
};

/// The numeric addresses ("10.0.0.1", "fe80::1") a host name or literal resolves to, for
/// comparing addresses; empty when it does not resolve. Never throws.
std::vector<std::string> numeric_addresses(const std::string& host) noexcept;

/// Default port of meshperfd: one port carries the API, the peer session and data streams.
inline constexpr std::uint16_t default_port = 7470;

/// Parses HOST[:PORT] ([V6]:PORT for IPv6 literals); the port defaults to default_port.
/// Throws core::spec_error on an empty host or a bad port.
endpoint_address parse_endpoint(std::string_view text, std::uint16_t default_port_ = default_port);

/// Owns one socket descriptor; closes it on destruction. Move-only.
class socket_fd {
public:
    socket_fd() = default;
    explicit socket_fd(int fd) noexcept : fd_(fd) {}
    socket_fd(socket_fd&& o) noexcept : fd_(o.release()) {}
    socket_fd& operator=(socket_fd&& o) noexcept;
    socket_fd(const socket_fd&) = delete;
    socket_fd& operator=(const socket_fd&) = delete;
    ~socket_fd();

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    /// Gives up ownership and returns the descriptor.
    int release() noexcept { int f = fd_; fd_ = -1; return f; }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

using clock = std::chrono::steady_clock;

/// Errors of getaddrinfo (EAI_NONAME, EAI_AGAIN, ...): message() is gai_strerror's text.
const std::error_category& resolve_category() noexcept;

/// A host name that does not resolve. what(): "cannot resolve HOST: Name or service not
/// known"; code() is in resolve_category(), so code().message() says why as well.
class resolve_error : public std::system_error {
public:
    resolve_error(std::string host, int eai_code);
    /// The name as it was given.
    const std::string& host() const noexcept { return host_; }

private:
    std::string host_;
};

/// Resolves and connects (IPv4 or IPv6) within the timeout. The socket is returned in
/// blocking mode. Throws resolve_error when the name does not resolve, std::system_error
/// otherwise: "connect to HOST:PORT: Connection refused". `from` (an IP literal, empty:
/// any) binds the local end first, so the connection leaves from that address (a rail's);
/// addresses of the other family are skipped.
socket_fd connect_tcp(const endpoint_address& to, std::chrono::milliseconds timeout, const std::string& from = {});

/// Writes all bytes before the deadline. Throws std::system_error (timeout: ETIMEDOUT;
/// peer gone: EPIPE/ECONNRESET).
void send_all(int fd, const void* data, std::size_t len, clock::time_point deadline);

/// Reads up to len bytes, waiting until the deadline for at least one. Returns 0 at end of
/// stream. Throws std::system_error (ETIMEDOUT on deadline).
std::size_t recv_some(int fd, void* data, std::size_t len, clock::time_point deadline);

/// Waits until fd is readable or the deadline passes. Returns false on timeout.
bool wait_readable(int fd, clock::time_point deadline);
/// Waits until fd is writable or the deadline passes. Returns false on timeout.
bool wait_writable(int fd, clock::time_point deadline);

/// Clears O_NONBLOCK (a descriptor released from Asio is non-blocking).
void set_blocking(int fd, bool blocking);

/// Socket tuning shared by the data streams. Each throws std::system_error naming the option.
void set_nodelay(int fd, bool on);
void set_buffer_sizes(int fd, std::uint64_t bytes);
/// Linux SO_BUSY_POLL in microseconds; returns false where the kernel refuses it.
bool try_set_busy_poll(int fd, int usec);

/// Address of the local end of a connected socket ("10.0.0.1"), without the port.
std::string local_ip(int fd);
/// Whether the other end of connected socket `fd` has closed or reset it (it shut its
/// writing side down: POLLRDHUP, or the socket is in error), without waiting or reading:
/// work done for a client that has left can stop.
bool peer_has_closed(int fd);

/// Address of the remote end of a connected socket, without the port.
std::string peer_ip(int fd);
/// The network interface that holds address `ip` ("10.0.0.1" -> "ens7"); empty when no
/// interface does or `ip` is not an address.
std::string interface_for_address(const std::string& ip);

}  // namespace meshperf::transport
