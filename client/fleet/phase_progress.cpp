#include "client/fleet/phase_progress.hpp"

#include "client/support/progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace meshperf::client {

phase_progress::phase_progress(bool quiet, bool progress) {
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    tty_ = terminal && (progress || !quiet);
    log_ = !terminal && progress;
}

void phase_progress::start(const char* what, std::size_t k, std::size_t of, std::size_t total) {
    if (k == 1) started_ = std::chrono::steady_clock::now();
    what_ = what, k_ = k, of_ = of, total_ = total, done_ = 0;
    show();
}

void phase_progress::job_done() {
    ++done_;
    show();
}

void phase_progress::end() const {
    if (tty_) std::fprintf(stderr, "\r\033[K");
}

void phase_progress::show() {
    if (!tty_ && !log_) return;
    std::lock_guard lock(m_);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const auto text = phase_progress_line(what_, k_, of_, unit_, done_.load(), total_, elapsed);
    if (tty_) std::fprintf(stderr, "\r\033[K%s", text.c_str());
    else std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
}

}  // namespace meshperf::client
