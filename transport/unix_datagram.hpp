#pragma once
/// One datagram to a local (AF_UNIX) socket: what a service manager's notification socket
/// takes (daemon/runtime/sd_notify.cpp speaks systemd's protocol over it).
#include <string_view>
#include <system_error>

namespace meshperf::transport {

/// Sends `data` as one datagram to the AF_UNIX datagram socket at `path`: an absolute file
/// path ("/run/systemd/notify"), or "@name" for a socket in the abstract namespace. Returns
/// an empty error_code when it went out whole; EAFNOSUPPORT when `path` is neither form or
/// too long for a socket address; EMSGSIZE for a short send; otherwise the errno of
/// socket() or sendto(); EAGAIN at once when the receiver's queue is full (a frozen service
/// manager never blocks the caller: the daemon's I/O thread sends its watchdog pings).
/// Never throws; a signal that interrupts the send is retried.
std::error_code send_unix_datagram(std::string_view path, std::string_view data) noexcept;

}  // namespace meshperf::transport
