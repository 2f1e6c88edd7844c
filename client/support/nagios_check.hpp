#pragma once
/// What both kinds of `meshperf check` (a path's, client/commands/check.cpp, and a
/// collective's, client/collective/check.hpp) share around their verdicts, Nagios-plugin
/// style: the --timeout bound and the watchdog that answers UNKNOWN when it passes, and
/// --prom-file, the node_exporter textfile written atomically.
#include <functional>
#include <string>

namespace meshperf::client {

/// The longest --timeout: a day. Longer (or inf) would overflow the watchdog's clock.
inline constexpr double max_check_timeout_s = 86400;

/// Throws core::spec_error unless 0 < --timeout <= max_check_timeout_s.
void check_timeout(double timeout_s);

/// Runs `work` and returns its exit code; when it has not returned within `timeout_s`,
/// `on_timeout` reports UNKNOWN from another thread and the process exits with its code. A
/// health check must answer: a hung daemon or peer is UNKNOWN after --timeout.
int run_with_deadline(double timeout_s, const std::function<int()>& work, const std::function<int()>& on_timeout);

/// Why --prom-file PATH cannot be written ("" when it can, or is not given): its folder
/// must exist and be writable, checked before anything is measured.
std::string prom_file_problem(const std::string& path);

/// Writes `text` to `path` atomically for node_exporter's textfile collector: a temporary
/// file in the same directory (so the rename cannot cross filesystems), written, flushed
/// to disk, made world-readable (0644), then renamed over `path`. The collector never reads
/// a half-written file. Throws client_error naming the step that failed; no temporary file
/// is left behind.
void write_file_atomically(const std::string& path, const std::string& text);

/// Writes a node_exporter textfile made by `text(now)` (now: seconds since the Unix epoch)
/// to `path` (nothing when empty). Returns false after saying on stderr why it failed: the
/// check then exits UNKNOWN (3), since the monitoring that reads the file would see a stale
/// verdict.
bool write_textfile(const std::string& path, const std::function<std::string(double)>& text);

}  // namespace meshperf::client
