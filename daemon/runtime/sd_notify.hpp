#pragma once
/// systemd service notifications (readiness, status text, watchdog keepalives) for a
/// Type=notify unit, spoken directly over the $NOTIFY_SOCKET datagram protocol.
///
/// Why not libsystemd's sd_notify(): the protocol is one AF_UNIX datagram of
/// newline-separated KEY=VALUE assignments, documented as a stable interface (sd_notify(3),
/// "Notes"), and this file (with transport/unix_datagram, which sends the datagram) is the
/// whole implementation. Speaking it ourselves gives one code path whether or not
/// libsystemd is installed, keeps these helpers free of link dependencies (the unit tests
/// use them against a real socket), and lets status text be sanitised before it is sent.
/// MESHPERF_HAVE_SYSTEMD is therefore not needed here.
///
/// Every function is safe to call when the daemon does not run under systemd: without
/// $NOTIFY_SOCKET nothing is sent and the result says so. None of them throws. They read
/// the environment on each call, so they may be called from any thread as long as nothing
/// modifies the environment concurrently (meshperfd does not).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <system_error>

namespace meshperf::daemon::sd {

/// Outcome of one notification.
struct notify_result {
    bool sent = false;      ///< the datagram went out
    std::error_code error;  ///< set when $NOTIFY_SOCKET is set but unusable or sending failed
    /// True when there is no service manager to tell ($NOTIFY_SOCKET unset or empty).
    bool no_manager() const noexcept { return !sent && !error; }
    explicit operator bool() const noexcept { return sent; }
};

/// Sends the assignments in `state` as they are (e.g. "READY=1\nSTATUS=serving").
/// Prefer the helpers below, which build well-formed messages.
notify_result notify(std::string_view state) noexcept;

/// "READY=1" plus a status line: the daemon listens and accepts requests. Call once, after
/// the listening socket is bound and the store is open; systemd holds dependent units and
/// `systemctl start` until then.
notify_result ready(std::string_view status_text = {}) noexcept;

/// "STATUS=<text>": the one line `systemctl status meshperfd` shows. Newlines and other
/// control characters in `text` are replaced by spaces, so text from the network cannot
/// inject assignments such as READY=1 or WATCHDOG_USEC=.
notify_result status(std::string_view text) noexcept;

/// "STOPPING=1" plus a status line: shutdown has begun (send before closing sessions).
notify_result stopping(std::string_view status_text = {}) noexcept;

/// "WATCHDOG=1": one keepalive. Call every watchdog_ping_interval() from the thread whose
/// liveness it should prove: meshperfd calls it from a timer on its io_context, so a
/// stalled event loop stops the keepalives and systemd restarts the daemon.
notify_result watchdog() noexcept;

/// "EXTEND_TIMEOUT_USEC=<usec>": asks for more time to start or stop (e.g. while a large
/// result store is checked at startup). Rounded up to whole microseconds.
notify_result extend_timeout(std::chrono::microseconds more) noexcept;

/// The watchdog timeout systemd enforces (WatchdogSec=), when it applies to this process:
/// $WATCHDOG_USEC is a positive integer and $WATCHDOG_PID is unset or this process's id.
/// std::nullopt when the watchdog is off.
std::optional<std::chrono::microseconds> watchdog_timeout() noexcept;

/// How often to call watchdog(): half the timeout, as sd_watchdog_enabled(3) advises.
/// std::nullopt when the watchdog is off.
std::optional<std::chrono::microseconds> watchdog_ping_interval() noexcept;

// The pure parts, exposed for tests.

/// Parses $WATCHDOG_USEC and $WATCHDOG_PID (either may be null) for process `self`.
std::optional<std::chrono::microseconds> parse_watchdog(const char* usec, const char* pid,
                                                         pid_t self) noexcept;

/// `text` with every control character (newline, CR, tab, NUL, ...) replaced by a space.
std::string sanitize_status(std::string_view text);

}  // namespace meshperf::daemon::sd
