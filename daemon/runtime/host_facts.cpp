#include "daemon/runtime/host_facts.hpp"

#include <chrono>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fstream>
#include <sys/utsname.h>
#include <thread>

namespace meshperf::daemon {

core::host_info local_host_info(const std::string& address) {
    core::host_info h;
    h.address = address;
    h.version = MESHPERF_VERSION;
    utsname u{};
    if (::uname(&u) == 0) {
        h.hostname = u.nodename;
        h.kernel = u.release;
    }
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) h.cpu_model = line.substr(colon + 2);
            break;
        }
    h.cpu_count = std::thread::hardware_concurrency();
    return h;
}

std::string utc_now_rfc3339() {
    const auto now = std::chrono::system_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

}  // namespace meshperf::daemon
