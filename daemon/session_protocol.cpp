#include "daemon/session_protocol.hpp"

#include "core/json_fields.hpp"
#include "transport/tcp/stream_loops.hpp"

#include <algorithm>
#include <cstdlib>

namespace meshperf::daemon {

int session_protocol_version() {
    // MESHPERF_SESSION_PROTOCOL exists so tests can stand up a daemon of another version.
    static const int version = [] {
        const char* v = std::getenv("MESHPERF_SESSION_PROTOCOL");
        return v && *v ? std::atoi(v) : 1;
    }();
    return version;
}

void guard_session_socket(int fd) { transport::tcp::set_dead_path_timeout(fd, session_user_timeout_ms); }

std::uint64_t agreed_byte_cap(const core::run_limits& own, const nlohmann::json& other_hello) {
    std::uint64_t cap = own.max_bytes_per_point;
    const auto limits = other_hello.value("limits", nlohmann::json::object());
    if (limits.is_object() && limits.contains("max_bytes_per_point") && limits["max_bytes_per_point"].is_number_unsigned())
        cap = std::min(cap, core::json_unsigned(limits["max_bytes_per_point"], "max_bytes_per_point"));
    return cap;
}

std::vector<std::string> peer_memory_notes(const nlohmann::json& message) {
    std::vector<std::string> notes;
    const auto it = message.find("memory_notes");
    if (it == message.end() || !it->is_array()) return notes;
    for (const auto& n : *it)
        if (n.is_string() && notes.size() < 8) notes.push_back(n.get<std::string>().substr(0, 500));
    return notes;
}

}  // namespace meshperf::daemon
