#pragma once
/// The counters of the NIC and RDMA port one end of a point ran over (docs/counters.md):
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

namespace meshperf::daemon {

class frame_channel;

/// The RDMA port a point's data path runs over.
struct rdma_port_used {
    std::string device;  ///< "mlx5_0", "rxe0"
    unsigned port = 1;
};

/// One end's counters of one point: the interface that holds the session's local address,
/// and the RDMA port when the point runs over verbs.
class point_link_counters {
public:
    /// `fixed_length`: a latency or fixed-count point, counted from its start; otherwise
    /// the reading before is taken again just before the warm-up ends.
    point_link_counters(const std::filesystem::path& sysfs_root, const frame_channel& ch,
                        const std::optional<rdma_port_used>& rdma, const core::run_spec& spec, bool fixed_length);
    /// When the data path starts.
    void at_start();
    /// Every tick, `elapsed_s` since the start.
    void at_tick(double elapsed_s);
    /// When the point's data has arrived (not merely when the window closed: a slow link
    /// drains the senders' queues after that, and those bytes count in the window's figures).
    void at_end();
    /// The deltas; empty when nothing could be read. Logs each unreadable directory once.
    std::optional<core::link_side_counters> counters();

private:
    transport::link_counter_probe probe_;
    double reread_at_s_;  ///< < 0: no second reading before
    bool reread_ = false;
};

/// The link counters the peer sent in its point_done; empty from a peer that sends none.
/// Throws session_error when they are malformed.
std::optional<core::link_side_counters> peer_link_counters(const nlohmann::json& peer_done);

/// Puts both ends' counters on the point (when either end has them), checked, with the
/// warnings they give (core::link_counter_warnings). Throws core::insane_figure.
void attach_link_counters(core::point_result& point, std::optional<core::link_side_counters> initiator,
                          std::optional<core::link_side_counters> peer);

}  // namespace meshperf::daemon
