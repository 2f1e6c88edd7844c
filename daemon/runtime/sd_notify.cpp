#include "daemon/runtime/sd_notify.hpp"

#include "transport/unix_datagram.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace meshperf::daemon::sd {
namespace {

std::error_code errno_code(int err) { return {err, std::generic_category()}; }

bool parse_decimal(const char* text, unsigned long long& out) noexcept {
    if (!text || !*text) return false;
    const char* end = text + std::strlen(text);
    const auto [p, ec] = std::from_chars(text, end, out);
    return ec == std::errc{} && p == end;
}

}  // namespace

notify_result notify(std::string_view state) noexcept {
    const char* env = std::getenv("NOTIFY_SOCKET");
    if (!env || !*env) return {};
    if (const auto err = transport::send_unix_datagram(env, state)) return {false, err};
    return {true, {}};
}

std::string sanitize_status(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return out;
}

namespace {

notify_result notify_with_status(std::string_view first, std::string_view status_text) noexcept {
    try {
        std::string msg(first);
        if (!status_text.empty()) {
            msg += "\nSTATUS=";
            msg += sanitize_status(status_text);
        }
        return notify(msg);
    } catch (...) {  // std::bad_alloc: a notification is never worth an exception
        return {false, errno_code(ENOMEM)};
    }
}

}  // namespace

notify_result ready(std::string_view status_text) noexcept {
    return notify_with_status("READY=1", status_text);
}

notify_result status(std::string_view text) noexcept {
    try {
        return notify("STATUS=" + sanitize_status(text));
    } catch (...) {
        return {false, errno_code(ENOMEM)};
    }
}

notify_result stopping(std::string_view status_text) noexcept {
    return notify_with_status("STOPPING=1", status_text);
}

notify_result watchdog() noexcept { return notify("WATCHDOG=1"); }

notify_result extend_timeout(std::chrono::microseconds more) noexcept {
    char buf[64] = "EXTEND_TIMEOUT_USEC=";
    const std::size_t prefix = std::strlen(buf);
    const long long usec = more.count() > 0 ? more.count() : 0;
    const auto [end, ec] = std::to_chars(buf + prefix, buf + sizeof buf, usec);
    if (ec != std::errc{}) return {false, errno_code(EINVAL)};
    return notify(std::string_view(buf, static_cast<std::size_t>(end - buf)));
}

std::optional<std::chrono::microseconds> parse_watchdog(const char* usec, const char* pid,
                                                         pid_t self) noexcept {
    unsigned long long us = 0;
    if (!parse_decimal(usec, us) || us == 0) return std::nullopt;
    // systemd sets WATCHDOG_PID to the main process; a child that inherited the
    // environment must not believe the watchdog is its business.
    if (pid && *pid) {
        unsigned long long p = 0;
        if (!parse_decimal(pid, p) || p != static_cast<unsigned long long>(self)) return std::nullopt;
    }
    constexpr unsigned long long max_us =
        static_cast<unsigned long long>(std::chrono::microseconds::max().count());
    if (us > max_us) return std::nullopt;
    return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(us));
}

std::optional<std::chrono::microseconds> watchdog_timeout() noexcept {
    return parse_watchdog(std::getenv("WATCHDOG_USEC"), std::getenv("WATCHDOG_PID"), ::getpid());
}

std::optional<std::chrono::microseconds> watchdog_ping_interval() noexcept {
    const auto timeout = watchdog_timeout();
    if (!timeout) return std::nullopt;
    // Never 0: a 1 µs WatchdogSec is absurd but must not spin the caller's timer.
    return std::max(*timeout / 2, std::chrono::microseconds(1));
}

}  // namespace meshperf::daemon::sd
