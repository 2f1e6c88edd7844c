#include "daemon/transports/tcp/tcp_rail_memory.hpp"

#include "daemon/runtime/gpu_support.hpp"
#include "daemon/transports/tcp/tcp_rail_failures.hpp"
#include "transport/socket.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

namespace tcp = transport::tcp;

const std::string& stream_memory(const core::run_spec& point, const std::vector<tcp::stream_role>& roles, std::size_t i,
                                 bool initiator) {
    if (point.rails.empty()) return initiator ? point.local_memory : point.remote_memory;
    const auto rail = core::rail_of_stream(tcp_rails::index_in_role(roles, i), point.streams);
    return core::rail_memory(point, point.rails.at(rail), initiator);
}

side_stream_memory::side_stream_memory(const core::run_spec& run, bool initiator, const domain_factory& make)
    : initiator_(initiator) {
    for (const auto& domain : core::side_memories(run, initiator))
        if (domain != "host" && !by_domain_.count(domain)) by_domain_.emplace(domain, make(domain, run));
}

tcp::staged_stream_factory side_stream_memory::for_point(const core::run_spec& point, const std::vector<tcp::stream_role>& roles) const {
    if (by_domain_.empty()) return {};
    return [this, &point, &roles](tcp::stream_role role, std::size_t size, std::size_t i) -> std::unique_ptr<tcp::staged_stream> {
        const auto it = by_domain_.find(stream_memory(point, roles, i, initiator_));
        if (it == by_domain_.end()) return nullptr;  // host memory
        return it->second(role, size, i);
    };
}

std::vector<std::string> side_memory_notes(const core::run_spec& run, bool initiator, const std::string& session_interface) {
    const std::string side = initiator ? "initiator" : "peer";
    if (run.rails.empty())
        return memory_notes(initiator ? run.local_memory : run.remote_memory, side, session_interface, true);
    std::vector<std::string> notes;
    for (const auto& r : run.rails) {
        const auto& domain = core::rail_memory(run, r, initiator);
        if (domain == "host") continue;
        const auto& address = initiator ? r.local_address : r.peer_address;
        for (auto& n : memory_notes(domain, fmt::format("{} rail {}", side, initiator ? r.name : r.peer_name),
                                    transport::interface_for_address(address), true))
            notes.push_back(std::move(n));
    }
    return notes;
}

}  // namespace meshperf::daemon
