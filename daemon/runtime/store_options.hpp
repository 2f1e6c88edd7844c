#pragma once
/// How the result store keeps its history: retention by count, age and size, the check it
/// runs at start, and how unstored results wait in memory. From the configuration's [store]
/// table (daemon/runtime/config.hpp); documented in docs/operations-service.md.
#include <cstddef>
#include <cstdint>

namespace meshperf::daemon {

/// Settings of result_store. The defaults keep the database under about 256 MiB plus the
/// WAL (journal_size_limit, 4 MiB after a checkpoint).
struct store_options {
    /// Finished runs kept; the oldest beyond this are deleted. 0 = no limit by count.
    std::size_t max_runs = 10'000;
    /// Finished runs older than this (by created_at) are deleted. 0 = no limit by age.
    double max_age_days = 90;
    /// Pages in use (page_count - freelist_count, times page_size) beyond this delete the
    /// oldest finished runs until under it. 0 = no limit by size.
    std::uint64_t max_bytes = std::uint64_t{256} << 20;
    /// At start: PRAGMA integrity_check (reads every page and index) instead of quick_check.
    bool integrity_check = false;
    /// Results that could not be stored (disk full, read-only) kept in memory and retried;
    /// beyond this many the oldest is given up (logged).
    std::size_t max_pending = 64;
    /// Seconds between retries of unstored results (each save retries them too).
    double retry_interval_s = 10;
};

}  // namespace meshperf::daemon
