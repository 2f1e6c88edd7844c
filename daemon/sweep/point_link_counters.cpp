#include "daemon/sweep/point_link_counters.hpp"

#include "core/counter_sources.hpp"

#include "core/counter_intervals.hpp"
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

/// core::link_counter_interval in seconds.
constexpr double interval_s = std::chrono::duration<double>(core::link_counter_interval).count();

transport::link_counter_target path_target(const frame_channel& ch, const std::optional<transport::counter_source_target>& device) {
    transport::link_counter_target t;
    t.count(core::nic_source_kind, transport::interface_for_address(transport::local_ip(ch.fd())));
    if (device) t.count(device->kind, device->device, device->port);
    return t;
}

/// One probe for the path, or one per rail of the spec (each rail's NIC on this end).
std::vector<transport::link_counter_probe> probes_for(const std::filesystem::path& sysfs_root, const frame_channel& ch,
                                                      const std::optional<transport::counter_source_target>& device,
                                                      const core::run_spec& spec, bool initiator,
                                                      const std::vector<transport::counter_source_target>& rail_devices) {
    std::vector<transport::link_counter_probe> out;
    if (spec.rails.empty()) {
        out.emplace_back(sysfs_root, path_target(ch, device));
        return out;
    }
    for (std::size_t k = 0; k < spec.rails.size(); ++k) {
        const auto& r = spec.rails[k];
        transport::link_counter_target t;
        t.count(core::nic_source_kind, transport::interface_for_address(initiator ? r.local_address : r.peer_address));
        if (k < rail_devices.size()) t.count(rail_devices[k].kind, rail_devices[k].device, rail_devices[k].port);
        out.emplace_back(sysfs_root, t);
    }
    return out;
}

/// Bytes the flows of `direction` moved in the point's window.
std::uint64_t flow_bytes(const core::point_result& p, std::string_view direction) {
    std::uint64_t bytes = 0;
    for (const auto& f : p.flows)
        if (f.direction == direction) bytes += f.bytes;
    return bytes;
}

/// Bytes rail `k` moved in `direction`: each flow's bytes in the share of its rate the rail
/// carried (core/rail_figures.hpp). 0 when the point has no such figures (no cross-check).
std::uint64_t rail_bytes(const core::point_result& p, std::size_t k, std::string_view direction) {
    if (k >= p.rails.size()) return 0;
    double bytes = 0;
    for (std::size_t f = 0; f < p.flows.size(); ++f) {
        if (p.flows[f].direction != direction) continue;
        double total = 0;
        for (const auto& r : p.rails) total += f < r.flow_gbit_per_s.size() ? r.flow_gbit_per_s[f] : 0;
        const auto& mine = p.rails[k].flow_gbit_per_s;
        if (total > 0 && f < mine.size()) bytes += static_cast<double>(p.flows[f].bytes) * mine[f] / total;
    }
    return static_cast<std::uint64_t>(bytes);
}

std::optional<core::link_side_counters> side_from_json(const nlohmann::json& j, const char* field) {
    if (j.is_null()) return std::nullopt;
    try {
        auto c = core::link_side_counters_from_json(j);
        core::check_sane(c);
        return c;
    } catch (const std::exception& e) {
        throw session_error(fmt::format("the peer sent malformed \"{}\": {}", field, e.what()));
    }
}

}  // namespace

point_link_counters::point_link_counters(const std::filesystem::path& sysfs_root, const frame_channel& ch,
                                         const std::optional<transport::counter_source_target>& device,
                                         const core::run_spec& spec, bool fixed_length, bool initiator,
                                         const std::vector<transport::counter_source_target>& rail_devices)
    : probes_(probes_for(sysfs_root, ch, device, spec, initiator, rail_devices)),
      rails_(!spec.rails.empty()),
      // Two ticks before the warm-up ends: the last tick that surely comes before the window.
      reread_at_s_(fixed_length ? -1.0 : spec.warmup_s - 2 * std::chrono::duration<double>(progress_tick).count()),
      next_interval_s_(interval_s) {}

void point_link_counters::read_before(double elapsed_s) {
    for (auto& p : probes_) p.read_before();
    next_interval_s_ = elapsed_s + interval_s;
}

void point_link_counters::at_start() { read_before(0); }

void point_link_counters::at_tick(double elapsed_s) {
    if (!reread_ && reread_at_s_ > 0) {
        if (elapsed_s < reread_at_s_) return;  // still in the warm-up
        read_before(elapsed_s);
        reread_ = true;
        return;
    }
    if (elapsed_s < next_interval_s_) return;
    for (auto& p : probes_) p.read_interval();
    // The next boundary on the grid from the window's start (a late tick does not shift it).
    while (next_interval_s_ <= elapsed_s) next_interval_s_ += interval_s;
}

void point_link_counters::at_end() {
    for (auto& p : probes_) p.read_after();
}

end_link_counters point_link_counters::counters() {
    end_link_counters out;
    for (auto& p : probes_) {
        for (const auto& dir : p.take_unreadable())
            log_warn("link counters: cannot read {}: its counters are left out of the results (said once)", dir);
        if (rails_) out.rails.push_back(p.counters());
        else out.path = p.counters();
    }
    return out;
}

end_link_counters peer_link_counters(const nlohmann::json& peer_done, std::size_t rail_count) {
    end_link_counters out;
    if (const auto it = peer_done.find("link_counters"); it != peer_done.end())
        out.path = side_from_json(*it, "link_counters");
    const auto rails = peer_done.find("rail_link_counters");
    if (rails == peer_done.end() || rails->is_null()) return out;
    if (!rails->is_array() || rails->size() != rail_count)
        throw session_error(fmt::format("the peer sent \"rail_link_counters\" that is not an array of its {} rails", rail_count));
    for (const auto& r : *rails) out.rails.push_back(side_from_json(r, "rail_link_counters"));
    return out;
}

void add_link_counters(nlohmann::json& done, const end_link_counters& c) {
    if (c.path) done["link_counters"] = core::to_json(*c.path);
    if (c.rails.empty()) return;
    auto rails = nlohmann::json::array();
    for (const auto& r : c.rails) rails.push_back(r ? core::to_json(*r) : nlohmann::json(nullptr));
    done["rail_link_counters"] = std::move(rails);
}

void attach_link_counters(core::point_result& point, end_link_counters initiator, end_link_counters peer,
                          const std::vector<core::rail_pair>& rails) {
    const auto name = fmt::format("{} {}", core::format_size(point.size_bytes), core::to_string(point.test));
    const auto warn = [&](const core::link_counters& c, std::uint64_t sent_here, std::uint64_t sent_there) {
        for (auto& w : core::link_counter_warnings(c, name, sent_here, sent_there)) point.warnings.push_back(std::move(w));
    };
    if (initiator.path) core::check_sane(*initiator.path);
    if (peer.path) core::check_sane(*peer.path);
    point.link = core::link_counters{std::move(initiator.path), std::move(peer.path)};
    if (!point.link.empty()) warn(point.link, flow_bytes(point, "initiator->peer"), flow_bytes(point, "peer->initiator"));
    for (std::size_t k = 0; k < rails.size(); ++k) {
        core::rail_link_counters r{rails[k].name, {}};
        if (k < initiator.rails.size()) r.link.initiator = std::move(initiator.rails[k]);
        if (k < peer.rails.size()) r.link.peer = std::move(peer.rails[k]);
        if (r.link.empty()) continue;
        if (r.link.initiator) core::check_sane(*r.link.initiator);
        if (r.link.peer) core::check_sane(*r.link.peer);
        warn(r.link, rail_bytes(point, k, "initiator->peer"), rail_bytes(point, k, "peer->initiator"));
        point.rail_links.push_back(std::move(r));
    }
}

}  // namespace meshperf::daemon
