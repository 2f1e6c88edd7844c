#pragma once
/// Runs a program as a short-lived child process and reads what it prints, within a
/// deadline: for work whose side effects must not stay in the daemon's own process (a
/// library that keeps devices open once asked, as libfabric's verbs provider does).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::transport {

/// What the child printed on stdout (at most `max_bytes`) and its exit status; nullopt with
/// `why` set when it could not be started, printed too much, or did not finish by `limit`
/// (it is then killed and reaped).
struct child_result {
    std::string out;
    int status = -1;  ///< its exit code, or -1 when it did not exit normally
};
std::optional<child_result> run_child(const std::string& program, const std::vector<std::string>& args,
                                      std::chrono::milliseconds limit, std::size_t max_bytes, std::string& why);

}  // namespace meshperf::transport
