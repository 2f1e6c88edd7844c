#pragma once
/// The progress display on stderr that `sweep` and `collective` share. On a terminal the
/// queue and wait states rewrite one line; in a log (--progress without a terminal) every
/// state is a line of its own, with no control characters.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace meshperf::client {

/// Status and progress lines on stderr for one command's run.
class progress_printer {
public:
    /// Shown on a terminal unless `quiet`, and anywhere with `forced` (--progress).
    progress_printer(bool forced, bool quiet);

    /// Whether anything is printed.
    bool shown() const { return show_; }
    /// A state that the next one replaces (on a terminal, the same line).
    void status(const std::string& text);
    /// A line that stays.
    void line(const std::string& text);
    /// Ends a status line that still waits for its newline.
    void finish();
    /// One event of a streamed run when shown: a queue state (queue_status) as a status;
    /// "started" to `started`, "point" to `point`; the others ignored.
    void on_event(const nlohmann::json& event, const std::function<void()>& started,
                  const std::function<void(const nlohmann::json&)>& point);

private:
    bool tty_, show_;
    bool status_open_ = false;  // a terminal status line waits for its newline
};

/// The status text of a queue event of a streamed run: "queued at position 2 (measuring:
/// r-...)" for "queued", "waiting: ..." for "waiting"; nullopt for other events.
std::optional<std::string> queue_status(const nlohmann::json& event);

}  // namespace meshperf::client
