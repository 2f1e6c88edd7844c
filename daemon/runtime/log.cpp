#include "daemon/runtime/log.hpp"

#include "core/error.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace meshperf::daemon {
namespace {
std::atomic<int> threshold{static_cast<int>(log_level::info)};
std::mutex out;
constexpr const char* names[] = {"debug", "info", "warn", "error"};
// sd-daemon(3) priority prefixes, so journald files each line at its level.
constexpr const char* prefixes[] = {"<7>", "<6>", "<4>", "<3>"};
}  // namespace

void set_log_level(std::string_view name) {
    for (int i = 0; i < 4; ++i)
        if (name == names[i]) { threshold = i; return; }
    throw core::spec_error(fmt::format("unknown log level '{}': use debug, info, warn or error", name));
}

bool log_enabled(log_level l) { return static_cast<int>(l) >= threshold.load(std::memory_order_relaxed); }

void log_line(log_level l, std::string_view message) {
    std::lock_guard lock(out);
    std::fprintf(stderr, "%s%s: %.*s\n", prefixes[static_cast<int>(l)], names[static_cast<int>(l)],
                 static_cast<int>(message.size()), message.data());
}

}  // namespace meshperf::daemon
