#pragma once
/// Reads the counters of the sources a point runs over (its NIC, its RDMA port: the kinds of
/// core/counter_sources.hpp, which say where their files are) from sysfs, before its
/// measured window and after it: e.g. /sys/class/net/IF/statistics/* and carrier_changes,
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

/// One source to read: its kind (core::counter_source_kinds) and its device and port.
struct counter_source_target {
    std::string kind;    ///< "nic", "rdma"
    std::string device;  ///< "eth0", "mlx5_0"
    unsigned port = 0;   ///< for a kind with ports
};

/// What a point's counters are read from: any of the sources, none required.
struct link_counter_target {
    std::vector<counter_source_target> sources;  ///< in the order of core::counter_source_kinds()
    /// Reads the source of `kind` on `device` (and `port`), in place of one of the same kind
    /// read before; an empty device reads nothing. An unknown kind is ignored.
    void count(std::string_view kind, std::string device, unsigned port = 0);
    bool empty() const { return sources.empty(); }
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
    /// The deltas; empty when no source could be read both times.
    std::optional<core::link_side_counters> counters() const;
    /// Directories that could not be read, each named once per process (for the log).
    std::vector<std::string> take_unreadable();

    const link_counter_target& target() const { return target_; }

private:
    /// One reading: per source of the target, per group of its kind, the values (empty:
    /// the directory could not be read).
    struct reading {
        std::vector<std::vector<std::optional<core::counter_values>>> groups;
        std::chrono::steady_clock::time_point at{};
    };
    reading read_now();
    std::optional<core::counter_values> read_noting(const std::filesystem::path& dir);
    /// Feeds a reading inside or at the end of the window to the interval trackers.
    void follow(const reading& r);

    std::filesystem::path root_;
    link_counter_target target_;
    std::optional<reading> before_, after_;
    std::vector<std::vector<core::counter_interval_tracker>> intervals_;  ///< the window's, per source and group
    std::vector<std::string> unreadable_;
};

}  // namespace meshperf::transport
