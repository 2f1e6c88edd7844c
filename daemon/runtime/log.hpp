#pragma once
/// Minimal leveled logging to stderr (journald adds timestamps under systemd). Control
/// paths only: never called from a measurement loop.
#include <fmt/format.h>
#include <string_view>

namespace meshperf::daemon {

enum class log_level { debug = 0, info = 1, warn = 2, error = 3 };

/// Sets the threshold; parses "debug", "info", "warn", "error" (throws spec_error otherwise).
void set_log_level(std::string_view name);
bool log_enabled(log_level);
void log_line(log_level, std::string_view message);

template <class... A> void log_debug(fmt::format_string<A...> f, A&&... a) {
    if (log_enabled(log_level::debug)) log_line(log_level::debug, fmt::format(f, std::forward<A>(a)...));
}
template <class... A> void log_info(fmt::format_string<A...> f, A&&... a) {
    if (log_enabled(log_level::info)) log_line(log_level::info, fmt::format(f, std::forward<A>(a)...));
}
template <class... A> void log_warn(fmt::format_string<A...> f, A&&... a) {
    if (log_enabled(log_level::warn)) log_line(log_level::warn, fmt::format(f, std::forward<A>(a)...));
}
template <class... A> void log_error(fmt::format_string<A...> f, A&&... a) {
    if (log_enabled(log_level::error)) log_line(log_level::error, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace meshperf::daemon
