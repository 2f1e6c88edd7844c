#include "daemon/transports/link_setup.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <system_error>

namespace meshperf::daemon {

void link_setup::send_bytes(int fd, const void* data, std::size_t n, const std::string& who) const {
    try {
        transport::send_all(fd, data, n, deadline_);
    } catch (const std::system_error& e) {
        throw session_error(fmt::format("the {} set-up with {} failed: {} (see its daemon's log)", what_, who, e.what()));
    }
}

void link_setup::recv_bytes(int fd, void* data, std::size_t n, const std::string& who) const {
    auto* p = static_cast<char*>(data);
    while (n) {
        std::size_t got = 0;
        try {
            got = transport::recv_some(fd, p, n, deadline_);
        } catch (const std::system_error& e) {
            throw session_error(fmt::format("the {} set-up with {} failed: {} (see its daemon's log)", what_, who, e.what()));
        }
        if (got == 0) throw session_error(fmt::format("{} closed its connection during the {} set-up (see its daemon's log)", who, what_));
        p += got;
        n -= got;
    }
}

void link_setup::send(int fd, const nlohmann::json& description, const std::string& who) const {
    const auto text = description.dump();
    const std::uint32_t n = htonl(static_cast<std::uint32_t>(text.size()));
    send_bytes(fd, &n, sizeof n, who);
    send_bytes(fd, text.data(), text.size(), who);
}

nlohmann::json link_setup::receive(int fd, const std::string& who) const {
    std::uint32_t n = 0;
    recv_bytes(fd, &n, sizeof n, who);
    n = ntohl(n);
    if (n == 0 || n > 64 * 1024) throw session_error(fmt::format("{} sent a malformed {} description ({} bytes)", who, what_, n));
    std::string text(n, '\0');
    recv_bytes(fd, text.data(), n, who);
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw session_error(fmt::format("{} sent a malformed {} description: not a JSON object", who, what_));
    return j;
}

void link_setup::exchange_ready(const std::vector<int>& fds, const std::vector<std::string>& who) const {
    const char ready = 'R';
    for (std::size_t k = 0; k < fds.size(); ++k) send_bytes(fds[k], &ready, 1, who[k]);
    for (std::size_t k = 0; k < fds.size(); ++k) {
        char got = 0;
        recv_bytes(fds[k], &got, 1, who[k]);
        if (got != ready) throw session_error(fmt::format("{} sent {:#x} where the {} set-up expects ready", who[k], got, what_));
    }
}

}  // namespace meshperf::daemon
