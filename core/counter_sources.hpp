#pragma once
/// The kinds of counter sources an end reads around a point, one entry each: where its files
/// are under sysfs, how its groups are named in a result, what it says about the bytes the
/// end sent. A new source (an EFA device's hw_counters, a libfabric counter) is a file that
/// returns one of these, and its line in counter_sources.cpp; the reader
/// (transport/link_counters_reader), the sanity check, the verdicts, the JSON and /metrics
/// go through this table.
#include "core/link_counters.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// One group of a source: a directory of counter files.
struct counter_group_kind {
    std::string_view name;  ///< as a result names it: "counters", "hw_counters"
    std::string_view dir;   ///< its directory under the source's root: "statistics", "counters"
    /// The value at which a counter of the group sticks (ib_counter_maximum), or null.
    std::optional<std::uint64_t> (*maximum)(std::string_view) = nullptr;
    /// Files of one number each, beside the directory under the source's root, read into this
    /// group as counters of their own name (a NIC's carrier_changes).
    std::vector<std::string_view> extra_files;
};

/// One kind of counter source.
struct counter_source_kind {
    std::string_view key;           ///< its JSON key and name: "nic", "rdma"
    std::string_view device_field;  ///< the JSON field of its device: "interface", "device"
    std::string_view part;          ///< what a message calls it: "NIC", "RDMA"
    bool has_port = false;          ///< its device has ports (a "port" field; in its root)
    /// Its root under the sysfs root: "class/net/{device}", "class/infiniband/{device}/ports/{port}".
    std::string_view root;
    std::vector<counter_group_kind> groups;
    /// Which source speaks for the end's bytes and its name when several were read: the one
    /// of the highest rank (an RDMA port before the netdev that RoCE bypasses).
    int rank = 0;
    /// Bytes the end sent in the window as this source counts them; empty when it does not.
    std::optional<std::uint64_t> (*bytes_sent)(const counter_source&) = nullptr;
};

/// Every kind, in the order an end's sources are kept and judged.
const std::vector<counter_source_kind>& counter_source_kinds();

/// The kind keyed `key`; null for a key no kind has.
const counter_source_kind* find_counter_source_kind(std::string_view key);

/// A source of `kind` with its groups empty, in the kind's order. Throws std::out_of_range
/// for an unknown kind.
counter_source empty_counter_source(std::string_view kind, std::string device, unsigned port = 0);

/// The NIC source: interface `device`, its "counters" group.
counter_source nic_source(std::string device, counter_group_delta counters);
/// The RDMA port source: `device` port `port`, its "counters" (PMA) and "hw_counters" groups.
counter_source rdma_port_source(std::string device, unsigned port, counter_group_delta counters,
                                counter_group_delta hw_counters);

/// The kind keys of what link_counter_target reads for the path's NIC and RDMA port.
inline constexpr std::string_view nic_source_kind = "nic";
inline constexpr std::string_view rdma_port_source_kind = "rdma";

/// Of an end's sources, the one of the highest rank; null when none was read.
const counter_source* leading_source(const link_side_counters&);

}  // namespace meshperf::core
