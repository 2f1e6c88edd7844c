#include "transport/child_output.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace meshperf::transport {

std::optional<child_result> run_child(const std::string& program, const std::vector<std::string>& args,
                                      std::chrono::milliseconds limit, std::size_t max_bytes, std::string& why) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        why = fmt::format("pipe: {}", std::strerror(errno));
        return std::nullopt;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        why = fmt::format("cannot start {}: {}", program, std::strerror(rc));
        return std::nullopt;
    }
    child_result r;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool failed = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            why = fmt::format("{} did not finish within {} ms", program, limit.count());
            failed = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
            why = fmt::format("poll: {}", std::strerror(errno));
            failed = true;
            break;
        }
        char buf[4096];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            why = fmt::format("read: {}", std::strerror(errno));
            failed = true;
            break;
        }
        if (r.out.size() + static_cast<std::size_t>(n) > max_bytes) {
            why = fmt::format("{} printed more than {} bytes", program, max_bytes);
            failed = true;
            break;
        }
        r.out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (failed) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (failed) return std::nullopt;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace meshperf::transport
