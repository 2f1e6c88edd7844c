#pragma once
/// The measured links of a matrix, kept compact: a full matrix of n hosts holds n(n−1) of
/// them (4.19 M at 2,048 hosts), so each is one fixed record of host indices, figures,
/// flags and up to two run ids packed in 8 bytes each (link_record, 48 bytes); what only a
/// few links have (an error, counter or rail problems, the figures before a retest, more or
/// odd run ids) lives in a side table that only those links use. Pure, no I/O.
#include "analysis/outliers.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::analysis {

/// A run id of the daemon's form "r-YYYYMMDD-HHMMSS-xxxxxx" packed in 64 bits (the top bit
/// set: the UTC second since 1970 and the 24-bit suffix); 0 when `id` is of another form.
std::uint64_t pack_run_id(const std::string& id);

/// The id pack_run_id packed (empty for 0).
std::string unpack_run_id(std::uint64_t packed);

/// One directed link as kept: what every link has.
struct link_record {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    double gbit_per_s = 0;       ///< NaN: absent
    double lat_us = 0;           ///< NaN: absent
    std::uint64_t run_ids[2]{};  ///< packed (pack_run_id), the first id_count of them
    std::uint32_t detail = 0;    ///< 1 + index into the side table; 0: none
    std::uint8_t id_count = 0;   ///< packed ids here; the side table's when it has them
    bool reachable = true;
    bool retested = false;
};

/// The links measured so far, each once (a retest replaces the figures and keeps the first).
class link_store {
public:
    /// A store for a matrix of host_count hosts.
    explicit link_store(std::size_t host_count);

    /// Reserves room for `links` records (a full matrix knows how many it measures).
    void reserve(std::size_t links) { records_.reserve(links); }

    /// Records a measurement of s.from → s.to with the ids of its runs. A link seen before is
    /// replaced only with `retest`: it is then marked retested, its earlier figures are kept
    /// as first(), and its run ids follow the earlier ones; without `retest` it is ignored.
    /// Returns whether the measurement was kept.
    bool put(const link_sample& s, std::span<const std::string> run_ids, bool retest);

    /// How many links are kept, in the order they were first measured.
    std::size_t size() const { return records_.size(); }
    /// How many of them are reachable.
    std::size_t reachable() const;
    /// Link i as a link_sample (its error and problems from the side table).
    link_sample sample(std::size_t i) const;
    /// Whether link i was measured again, and its figures before that (absent if not).
    bool retested(std::size_t i) const { return records_[i].retested; }
    std::optional<link_sample> first(std::size_t i) const;
    /// The ids of link i's runs, oldest first.
    std::vector<std::string> run_ids(std::size_t i) const;
    /// The links as a link_source for analyze_link_source (valid while the store lives).
    link_source source() const;
    /// Heap bytes held: the records and the index (by capacity), the side table roughly.
    std::size_t bytes() const;

private:
    struct detail {
        std::string error;
        std::vector<std::string> counter_problems, rail_problems;
        std::vector<std::string> run_ids;   // every id of the link, when they do not fit the record
        std::optional<link_sample> first;   // the figures before the retest
    };
    link_record make_record(const link_sample& s, std::span<const std::string> run_ids);
    detail& detail_of(link_record& r);

    std::size_t host_count_;
    std::vector<link_record> records_;
    /// Per sending host, (to, records_ index) sorted by `to`: 8 bytes a link, whether the
    /// matrix is full or a triage's few links a host.
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> index_;
    std::vector<detail> details_;
};

}  // namespace meshperf::analysis
