#pragma once
/// The counters of the NIC (and the device, e.g. the RDMA port) one end of a point ran over (docs/counters.md):
/// read by the point harness before the measured window opens and after the point's data
/// has arrived (the initiator after the peer's point_done, the peer once its streams ended), sent
/// by the peer in its point_done, and attached with their warnings to the point.
#include "core/link_counters.hpp"
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "transport/link_counters_reader.hpp"

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::daemon {

class frame_channel;

/// One end's counters of one point: without rails, of the session's NIC (and the RDMA port
/// of a verbs point); over rails, of each rail's NIC, in the order of spec.rails.
struct end_link_counters {
    std::optional<core::link_side_counters> path;                ///< no rails: the session's NIC and port
    std::vector<std::optional<core::link_side_counters>> rails;  ///< over rails: one per rail (empty entry: unreadable)
};

/// One end's counters of one point: the interface that holds the session's local address,
/// and the data path's own device source (the RDMA port of a verbs point); over rails, the interface that holds
/// each rail's address on this end instead (the initiator's local_address, the peer's
/// peer_address), since the session's NIC carries none of the rails' bytes.
class point_link_counters {
public:
    /// `fixed_length`: a latency or fixed-count point, counted from its start; otherwise
    /// the reading before is taken again just before the warm-up ends. `initiator`: which
    /// end this is (it picks each rail's address). `device`: the data path's own counter
    /// source, read with the session's NIC. `rail_devices`: over rails, each rail's device
    /// source (an RDMA port), read with the rail's NIC.
    point_link_counters(const std::filesystem::path& sysfs_root, const frame_channel& ch,
                        const std::optional<transport::counter_source_target>& device, const core::run_spec& spec,
                        bool fixed_length, bool initiator = true,
                        const std::vector<transport::counter_source_target>& rail_devices = {});
    /// When the data path starts.
    void at_start();
    /// Every tick, `elapsed_s` since the start: the reading before is taken again just
    /// before the window opens, and once it is open the counters are read every
    /// core::link_counter_interval (their spread across intervals; docs/counters.md).
    void at_tick(double elapsed_s);
    /// When the point's data has arrived (not merely when the window closed: a slow link
    /// drains the senders' queues after that, and those bytes count in the window's figures).
    void at_end();
    /// The deltas; each part empty when nothing could be read. Logs each unreadable directory once.
    end_link_counters counters();

private:
    void read_before(double elapsed_s);
    std::vector<transport::link_counter_probe> probes_;  ///< the path's one, or one per rail
    bool rails_ = false;
    double reread_at_s_;  ///< < 0: no second reading before
    bool reread_ = false;
    double next_interval_s_;  ///< when the next reading inside the window is due (s since the start)
};

/// The peer's counters from its point_done ("link_counters", and "rail_link_counters": one
/// entry or null per rail); empty parts from a peer that sends none. Throws session_error
/// when they are malformed or the rail list's length is not `rail_count`.
end_link_counters peer_link_counters(const nlohmann::json& peer_done, std::size_t rail_count);

/// Puts one end's counters into its point_done (the fields peer_link_counters reads).
void add_link_counters(nlohmann::json& done, const end_link_counters& counters);

/// Puts both ends' counters on the point (when either end has them), checked, with the
/// warnings they give (core::link_counter_warnings): the path's on point.link, each rail's
/// on point.rail_links (named by `rails`, the run's). Throws core::insane_figure.
void attach_link_counters(core::point_result& point, end_link_counters initiator, end_link_counters peer,
                          const std::vector<core::rail_pair>& rails);

}  // namespace meshperf::daemon
