#include "client/support/progress_printer.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace meshperf::client {

progress_printer::progress_printer(bool forced, bool quiet)
    : tty_(::isatty(STDERR_FILENO) != 0), show_(forced || (tty_ && !quiet)) {}

void progress_printer::status(const std::string& text) {
    if (!show_) return;
    if (tty_) std::fprintf(stderr, "\r\033[K%s", text.c_str());
    else std::fprintf(stderr, "%s\n", text.c_str());
    status_open_ = tty_;
    std::fflush(stderr);
}

void progress_printer::line(const std::string& text) {
    if (!show_) return;
    std::fprintf(stderr, "%s%s\n", status_open_ ? "\r\033[K" : "", text.c_str());
    status_open_ = false;
    std::fflush(stderr);
}

void progress_printer::finish() {
    if (status_open_) std::fprintf(stderr, "\n");
    status_open_ = false;
}

void progress_printer::on_event(const nlohmann::json& ev, const std::function<void()>& started,
                                const std::function<void(const nlohmann::json&)>& point) {
    if (!show_) return;
    const auto kind = ev.value("event", "");
    if (const auto state = queue_status(ev)) status(*state);
    else if (kind == "started") started();
    else if (kind == "point") point(ev);
}

std::optional<std::string> queue_status(const nlohmann::json& ev) {
    const auto kind = ev.value("event", "");
    if (kind == "queued") {
        const auto running = ev.value("running", "");
        return fmt::format("queued at position {}{}", ev.value("position", 0), running.empty() ? "" : " (measuring: " + running + ")");
    }
    if (kind == "waiting") return "waiting: " + ev.value("reason", "");
    return std::nullopt;
}

}  // namespace meshperf::client
