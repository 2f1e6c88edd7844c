#include "daemon/session/session_protocol.hpp"

#include "core/json_fields.hpp"
#include "transport/tcp/stream_loops.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <cstdlib>

namespace meshperf::daemon {

int session_protocol_version() {
    // MESHPERF_SESSION_PROTOCOL exists so tests can stand up a daemon of another version.
    static const int version = [] {
        const char* v = std::getenv("MESHPERF_SESSION_PROTOCOL");
        return v && *v ? std::atoi(v) : 2;  // 2: heartbeat frames (2026-12-03)
    }();
    return version;
}

std::chrono::steady_clock::duration initiator_silence(const core::run_limits& limits) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(limits.initiator_silence_s));
}

std::string initiator_silence_message(const std::string& peer, const core::run_limits& limits) {
    return fmt::format("the initiator ({}) sent nothing for {:.0f} s, not even a heartbeat (frozen, or its host gone): this "
                       "peer ends the session and frees its measurement gate",
                       peer, limits.initiator_silence_s);
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

std::optional<announced_placement> announced_placement_of(const nlohmann::json& hello) {
    const auto it = hello.find("placement");
    if (it == hello.end() || !it->is_object()) return std::nullopt;
    try {
        announced_placement a;
        if (const auto b = it->find("boot_id"); b != it->end()) {
            if (!b->is_string() || b->get<std::string>().size() > 64) return std::nullopt;
            a.boot_id = b->get<std::string>();
        }
        // The CPU list is checked as a side placement's is.
        a.cpus = core::side_placement_from_json({{"cpus", it->value("cpus", nlohmann::json::array())}}).cpus;
        return a;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<core::side_placement> reported_placement(const nlohmann::json& point_done) {
    const auto it = point_done.find("placement");
    if (it == point_done.end() || it->is_null()) return std::nullopt;
    try {
        return core::side_placement_from_json(*it);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace meshperf::daemon
