#include "transport/unix_datagram.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace meshperf::transport {
namespace {

std::error_code datagram_errno(int err) { return {err, std::generic_category()}; }

// The address of `path`: an absolute path, or "@name" for a socket in the abstract
// namespace. Returns the address length, 0 when unusable.
socklen_t unix_address(std::string_view path, sockaddr_un& addr) noexcept {
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    const std::size_t len = path.size();
    if (len < 2 || (path[0] != '/' && path[0] != '@')) return 0;  // vsock: (systemd 254+) unsupported
    if (len > sizeof addr.sun_path - (path[0] == '/' ? 1 : 0)) return 0;
    std::memcpy(addr.sun_path, path.data(), len);
    if (path[0] == '@') addr.sun_path[0] = '\0';  // abstract: the name is the bytes after the NUL
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
}

}  // namespace

std::error_code send_unix_datagram(std::string_view path, std::string_view data) noexcept {
    sockaddr_un addr;
    const socklen_t addr_len = unix_address(path, addr);
    if (addr_len == 0) return datagram_errno(EAFNOSUPPORT);
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return datagram_errno(errno);
    ssize_t n;
    do {
        n = ::sendto(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&addr), addr_len);
    } while (n < 0 && errno == EINTR);
    const int err = n < 0 ? errno : 0;
    ::close(fd);
    if (err) return datagram_errno(err);
    // A datagram is sent whole or not at all; a short count would mean a broken kernel.
    if (static_cast<std::size_t>(n) != data.size()) return datagram_errno(EMSGSIZE);
    return {};
}

}  // namespace meshperf::transport
