#include "client/support/nagios_check.hpp"

#include "client/support/daemon_client.hpp"
#include "core/error.hpp"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace meshperf::client {

void check_timeout(double timeout_s) {
    if (!(timeout_s > 0 && timeout_s <= max_check_timeout_s))
        throw core::spec_error(
            fmt::format("--timeout {} is out of range: give 0 < seconds <= {}", timeout_s, max_check_timeout_s));
}

int run_with_deadline(double timeout_s, const std::function<int()>& work, const std::function<int()>& on_timeout) {
    std::mutex m;
    std::condition_variable cv;
    bool finished = false;
    std::thread watchdog([&] {
        std::unique_lock lock(m);
        const auto limit = std::chrono::duration<double>(timeout_s);
        if (cv.wait_for(lock, limit, [&] { return finished; })) return;
        std::_Exit(on_timeout());
    });
    const int rc = work();
    {
        std::lock_guard lock(m);
        finished = true;
    }
    cv.notify_all();
    watchdog.join();
    return rc;
}

std::string prom_file_problem(const std::string& path) {
    if (path.empty()) return {};
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return fmt::format("--prom-file {}: the folder {} does not exist (create it, or give a path in node_exporter's "
                           "textfile folder)",
                           path, dir.string());
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return fmt::format("--prom-file {}: cannot write in {}: {}", path, dir.string(), std::strerror(errno));
    return {};
}

void write_file_atomically(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    // Not ending in .prom, so the collector ignores it while it is being written.
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw client_error(exit_run_failed, fmt::format("cannot create a temporary file in {}: {}", dir.string(), std::strerror(errno)));
    auto fail = [&](const char* step) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: {} failed: {}", path, step, std::strerror(err)));
    };
    std::size_t done = 0;
    while (done < text.size()) {
        const auto n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write");
        done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0) fail("chmod");
    if (::fsync(fd) != 0) fail("fsync");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: close failed: {}", path, std::strerror(err)));
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot rename {} to {}: {}", tmpl, path, std::strerror(err)));
    }
}

bool write_textfile(const std::string& path, const std::function<std::string(double)>& text) {
    if (path.empty()) return true;
    try {
        const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        write_file_atomically(path, text(now));
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "meshperf: --prom-file: %s\n", e.what());
        return false;
    }
}

}  // namespace meshperf::client
