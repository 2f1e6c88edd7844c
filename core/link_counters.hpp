#pragma once
/// Counters of the sources a point ran over (its NIC, its RDMA port), read on each end just
/// before its measured window and just after it (docs/counters.md): the deltas, and the
/// counters that could not be turned into one (they went backwards, or stand at their
/// width's maximum). Pure: transport/link_counters_reader.hpp reads the files, and
/// core/counter_sources.hpp says what each kind of source is.
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// One reading of a directory of counter files: file name → value.
using counter_values = std::map<std::string, std::uint64_t>;

/// How a counter that should not move rose inside the window, from the readings taken at
/// interval boundaries (every link_counter_interval; docs/counters.md, "Inside a point").
struct counter_interval_spread {
    std::uint64_t intervals = 0;     ///< how many of the window's intervals it rose in (>= 1)
    std::uint64_t max_increase = 0;  ///< its largest rise in one interval (>= 1, <= its delta)
    double first_at_s = 0;           ///< end of the first interval it rose in, in s from the window's start
};

/// What one directory of counters did between two readings.
struct counter_group_delta {
    counter_values deltas;               ///< after − before, for counters in both readings that did not go down
    std::vector<std::string> resets;     ///< went down: the counter was reset or wrapped (driver reload); no delta
    std::vector<std::string> saturated;  ///< at their width's maximum after: the delta is a lower bound
    /// Counters that are not traffic (core::meaning_of) and rose, with how they rose across
    /// the window's intervals; empty when the window was read only before and after.
    std::map<std::string, counter_interval_spread> intervals;
    /// The counter's delta; empty when it was not read twice or was reset.
    std::optional<std::uint64_t> delta(std::string_view name) const;
};

/// The largest value a counter can hold before it sticks, for the InfiniBand PMA port
/// counters of /sys/class/infiniband/DEV/ports/P/counters whose width the IBTA
/// specification fixes (symbol_error 16 bits, link_downed 8, local_link_integrity_errors 4,
/// ...); empty for counters that are 64-bit or unknown. Such counters saturate rather than wrap.
std::optional<std::uint64_t> ib_counter_maximum(std::string_view name);

/// The deltas between two readings of one directory. `maximum` gives the saturation value
/// of a counter (ib_counter_maximum for RDMA port counters; nothing for the others).
counter_group_delta counter_delta(const counter_values& before, const counter_values& after,
                                  std::optional<std::uint64_t> (*maximum)(std::string_view) = nullptr);

/// One source of counters one end read around a point: a device's directories of counter
/// files, as its kind (core/counter_sources.hpp) says where they are and what they mean.
/// Sources today: the NIC the traffic crossed ("nic": /sys/class/net/IF/statistics and
/// carrier_changes) and the RDMA port a point ran over ("rdma": /sys/class/infiniband/DEV/
/// ports/P/counters and hw_counters).
struct counter_source {
    std::string kind;    ///< its kind's key: "nic", "rdma"
    std::string device;  ///< "eth0", "mlx5_0", "rxe0"
    unsigned port = 0;   ///< the port, for a kind that has one (RDMA: 1..)
    /// Its groups, one per group of its kind and in that order ("counters", "hw_counters");
    /// a group whose directory could not be read is empty.
    std::vector<counter_group_delta> groups;

    /// The group named by its kind ("counters"); throws std::out_of_range for another name.
    const counter_group_delta& group(std::string_view name) const;
    counter_group_delta& group(std::string_view name);
    /// Where a finding says the counter is: "eth0", "mlx5_0 port 1".
    std::string where() const;
};

/// What one end's counter sources did around a point. A source is absent when its files
/// could not be read (never zeros).
struct link_side_counters {
    double window_s = 0;                     ///< seconds between the two readings
    /// How many intervals the window was read in (its readings at interval boundaries
    /// split it); 0 when it was read only before and after.
    std::uint64_t intervals = 0;
    /// The sources read, in the order of core::counter_source_kinds().
    std::vector<counter_source> sources;

    /// The source of `kind`; null when it was not read.
    const counter_source* source(std::string_view kind) const;
    counter_source* source(std::string_view kind);
};

/// Both ends of a point.
struct link_counters {
    std::optional<link_side_counters> initiator;
    std::optional<link_side_counters> peer;  ///< absent from a peer that does not send them
    bool empty() const { return !initiator && !peer; }
};

/// One rail's NICs around a point of a run over rails (run_spec::rails): the initiator's
/// NIC that holds the rail's local address and the peer's that holds its address on the
/// rail. A run over rails records these instead of the session NIC's (point_result::link),
/// which carries none of the rails' bytes.
struct rail_link_counters {
    std::string rail;    ///< rail_pair::name
    link_counters link;
};

/// Throws insane_figure when a side's window is not positive and finite, a delta is named
/// in resets too, or an interval spread does not fit its counter (more intervals than the
/// window had, a rise above the counter's delta, a time outside the window).
void check_sane(const link_side_counters&);

/// {"window_s", "intervals", KIND: SOURCE, ...}: each source under its kind's key, with its
/// device under the kind's device field, its port where it has one, and each group by name:
/// "nic": {"interface", "counters": GROUP}, "rdma": {"device", "port", "counters": GROUP,
/// "hw_counters": GROUP}, with GROUP = {"deltas": {NAME: N, ...},
/// "resets": [NAME, ...], "saturated": [NAME, ...], "intervals": {NAME: {"moved_in",
/// "max_increase", "first_at_s"}, ...}}; parts that are absent (and "intervals" where the
/// window was not read in intervals) are left out.
nlohmann::json to_json(const link_side_counters&);
/// Reads what to_json wrote; throws spec_error naming the field when it is malformed.
link_side_counters link_side_counters_from_json(const nlohmann::json&);

}  // namespace meshperf::core
