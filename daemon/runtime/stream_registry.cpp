#include "daemon/runtime/stream_registry.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace meshperf::daemon {

void stream_registry::open(const std::string& token, std::size_t count) {
    std::lock_guard lock(m_);
    slots_[token].fds.resize(count);
}

bool stream_registry::expects(const std::string& token, std::size_t index) const {
    std::lock_guard lock(m_);
    const auto it = slots_.find(token);
    return it != slots_.end() && index < it->second.fds.size() && !it->second.fds[index];
}

bool stream_registry::deliver(const std::string& token, std::size_t index, transport::socket_fd fd) {
    {
        std::lock_guard lock(m_);
        const auto it = slots_.find(token);
        if (it == slots_.end() || index >= it->second.fds.size() || it->second.fds[index]) return false;
        it->second.fds[index] = std::move(fd);
        ++it->second.arrived;
    }
    cv_.notify_all();
    return true;
}

std::vector<transport::socket_fd> stream_registry::wait(const std::string& token, transport::clock::time_point deadline) {
    std::unique_lock lock(m_);
    const auto it = slots_.find(token);
    if (it == slots_.end()) throw std::runtime_error("no such stream token");
    const bool all = cv_.wait_until(lock, deadline, [&] { return it->second.arrived == it->second.fds.size(); });
    if (!all) {
        const auto msg = fmt::format("only {} of {} data streams arrived in time", it->second.arrived, it->second.fds.size());
        slots_.erase(it);
        throw std::runtime_error(msg);
    }
    auto fds = std::move(it->second.fds);
    slots_.erase(it);
    return fds;
}

void stream_registry::close(const std::string& token) {
    std::lock_guard lock(m_);
    slots_.erase(token);
}

}  // namespace meshperf::daemon
