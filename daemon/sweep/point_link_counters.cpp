#include "daemon/sweep/point_link_counters.hpp"

#include "core/counter_verdicts.hpp"
#include "core/sizes.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/socket.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

namespace {

transport::link_counter_target target_of(const frame_channel& ch, const std::optional<rdma_port_used>& rdma,
                                        const core::run_spec& spec) {
    transport::link_counter_target t;
    // A run over rails moves its bytes on the rails' NICs, not on the session's: that NIC's
    // counters would explain nothing (and fail the bytes cross-check). Per-rail NIC counters
    // are not recorded yet (docs/rails.md), so none are.
    if (!spec.rails.empty()) return t;
    t.interface = transport::interface_for_address(transport::local_ip(ch.fd()));
    if (rdma) {
        t.rdma_device = rdma->device;
        t.rdma_port = rdma->port;
    }
    return t;
}

/// Bytes the flows of `direction` moved in the point's window.
std::uint64_t flow_bytes(const core::point_result& p, std::string_view direction) {
    std::uint64_t bytes = 0;
    for (const auto& f : p.flows)
        if (f.direction == direction) bytes += f.bytes;
    return bytes;
}

}  // namespace

point_link_counters::point_link_counters(const std::filesystem::path& sysfs_root, const frame_channel& ch,
                                         const std::optional<rdma_port_used>& rdma, const core::run_spec& spec,
                                         bool fixed_length)
    : probe_(sysfs_root, target_of(ch, rdma, spec)),
      // Two ticks before the warm-up ends: the last tick that surely comes before the window.
      reread_at_s_(fixed_length ? -1.0 : spec.warmup_s - 2 * std::chrono::duration<double>(progress_tick).count()) {}

void point_link_counters::at_start() { probe_.read_before(); }

void point_link_counters::at_tick(double elapsed_s) {
    if (reread_ || reread_at_s_ <= 0 || elapsed_s < reread_at_s_) return;
    probe_.read_before();
    reread_ = true;
}

void point_link_counters::at_end() { probe_.read_after(); }

std::optional<core::link_side_counters> point_link_counters::counters() {
    for (const auto& dir : probe_.take_unreadable())
        log_warn("link counters: cannot read {}: its counters are left out of the results (said once)", dir);
    return probe_.counters();
}

std::optional<core::link_side_counters> peer_link_counters(const nlohmann::json& peer_done) {
    const auto it = peer_done.find("link_counters");
    if (it == peer_done.end() || it->is_null()) return std::nullopt;
    try {
        auto c = core::link_side_counters_from_json(*it);
        core::check_sane(c);
        return c;
    } catch (const std::exception& e) {
        throw session_error(fmt::format("the peer sent malformed \"link_counters\": {}", e.what()));
    }
}

void attach_link_counters(core::point_result& point, std::optional<core::link_side_counters> initiator,
                          std::optional<core::link_side_counters> peer) {
    if (initiator) core::check_sane(*initiator);
    if (peer) core::check_sane(*peer);
    point.link = core::link_counters{std::move(initiator), std::move(peer)};
    if (point.link.empty()) return;
    const auto name = fmt::format("{} {}", core::format_size(point.size_bytes), core::to_string(point.test));
    for (auto& w : core::link_counter_warnings(point.link, name, flow_bytes(point, "initiator->peer"),
                                               flow_bytes(point, "peer->initiator")))
        point.warnings.push_back(std::move(w));
}

}  // namespace meshperf::daemon
