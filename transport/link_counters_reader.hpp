#pragma once
/// Reads the counters of the NIC and the RDMA port a point runs over from sysfs, before its
/// measured window and after it: /sys/class/net/IF/statistics/* and carrier_changes,
/// /sys/class/infiniband/DEV/ports/P/counters/* and hw_counters/*. Every file that holds one
/// unsigned number is taken, whatever the driver names it; a file that cannot be read is
/// left out, never read as 0. Called by the controlling thread, never per message.
#include "core/counter_intervals.hpp"
#include "core/link_counters.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::transport {

/// Every regular file of `dir` whose content is one unsigned decimal number; files that
/// cannot be read or do not parse are left out. Empty when the directory cannot be listed.
std::optional<core::counter_values> read_counter_directory(const std::filesystem::path& dir);

/// What a point's counters are read from; either part may be absent.
struct link_counter_target {
    std::string interface;    ///< network interface ("eth0", "lo"); empty: none
    std::string rdma_device;  ///< RDMA device ("mlx5_0"); empty: none
    unsigned rdma_port = 1;
};

/// One point's counters on one end: read_before (again, until the window opens: the last
/// reading counts), read_interval at the window's interval boundaries (optional), then
/// read_after, then counters().
class link_counter_probe {
public:
    link_counter_probe(std::filesystem::path sysfs_root, link_counter_target target);

    void read_before();
    /// A reading inside the window: the counters that should not move are followed across
    /// intervals (core/counter_intervals.hpp). Ignored before read_before.
    void read_interval();
    void read_after();
    /// The deltas; empty when neither the NIC nor the port could be read both times.
    std::optional<core::link_side_counters> counters() const;
    /// Directories that could not be read, each named once per process (for the log).
    std::vector<std::string> take_unreadable();

    const link_counter_target& target() const { return target_; }

private:
    struct reading {
        std::optional<core::counter_values> nic, port, hw;
        std::chrono::steady_clock::time_point at{};
    };
    reading read_now();
    std::optional<core::counter_values> read_noting(const std::filesystem::path& dir);
    /// Feeds a reading inside or at the end of the window to the interval trackers.
    void follow(const reading& r);

    /// The window's intervals of each directory: nic, port, hw.
    struct trackers {
        core::counter_interval_tracker nic, port, hw;
    };

    std::filesystem::path root_;
    link_counter_target target_;
    std::optional<reading> before_, after_;
    trackers intervals_;
    std::vector<std::string> unreadable_;
};

}  // namespace meshperf::transport
