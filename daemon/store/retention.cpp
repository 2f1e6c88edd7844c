// The result store's retention: finished runs beyond max_runs, older than max_age_days, or
// beyond max_bytes of pages in use are deleted, oldest first; the pages they free go back to
// the file system (auto_vacuum=INCREMENTAL, on stores created by this version) or are
// reused (older stores), and the WAL is truncated.
#include "daemon/store/result_store.hpp"

#include "daemon/runtime/log.hpp"
#include "daemon/store/sqlite_statement.hpp"

#include <chrono>
#include <cmath>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sqlite3.h>

namespace meshperf::daemon {

namespace {

std::int64_t pragma_int(sqlite3* db, const char* sql) {
    sqlite_statement st;
    if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK || sqlite3_step(st.s) != SQLITE_ROW) return 0;
    return sqlite3_column_int64(st.s, 0);
}

/// Deletes the `n` oldest finished runs; returns how many went.
std::size_t delete_oldest(sqlite3* db, std::int64_t n, const std::string& path) {
    sqlite_statement st;
    const char* sql = "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE state NOT IN ('queued', 'running')"
                      " ORDER BY created_at ASC, id ASC LIMIT ?)";
    if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK) throw store_write_error(fmt::format("result store {}: {}", path, sqlite3_errmsg(db)));
    sqlite3_bind_int64(st.s, 1, n);
    if (sqlite3_step(st.s) != SQLITE_DONE) throw store_write_error(fmt::format("result store {}: retention: {}", path, sqlite3_errmsg(db)));
    return static_cast<std::size_t>(sqlite3_changes(db));
}

std::int64_t finished_runs(sqlite3* db) {
    return pragma_int(db, "SELECT count(*) FROM runs WHERE state NOT IN ('queued', 'running')");
}

}  // namespace

std::size_t result_store::apply_retention() {
    std::lock_guard lock(m_);
    return retention_locked();
}

std::size_t result_store::retention_locked() {
    if (!rw_) return 0;
    std::size_t deleted = 0;
    if (options_.max_age_days > 0) {
        const auto cutoff_tp = std::chrono::system_clock::now() -
                               std::chrono::seconds(static_cast<std::int64_t>(std::llround(options_.max_age_days * 86400)));
        const auto cutoff = fmt::format("{:%Y-%m-%dT%H:%M:%S}.000Z", fmt::gmtime(std::chrono::system_clock::to_time_t(cutoff_tp)));
        sqlite_statement st;
        if (sqlite3_prepare_v2(db_, "DELETE FROM runs WHERE state NOT IN ('queued', 'running') AND created_at < ?", -1, &st.s,
                               nullptr) != SQLITE_OK)
            throw store_write_error(fmt::format("result store {}: {}", path_, sqlite3_errmsg(db_)));
        sqlite3_bind_text(st.s, 1, cutoff.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st.s) != SQLITE_DONE) throw store_write_error(fmt::format("result store {}: retention: {}", path_, sqlite3_errmsg(db_)));
        deleted += static_cast<std::size_t>(sqlite3_changes(db_));
    }
    if (options_.max_runs > 0) {
        const auto excess = finished_runs(db_) - static_cast<std::int64_t>(options_.max_runs);
        if (excess > 0) deleted += delete_oldest(db_, excess, path_);
    }
    if (options_.max_bytes > 0) {
        for (int round = 0; round < 32; ++round) {
            const auto page_size = pragma_int(db_, "PRAGMA page_size");
            const auto used = (pragma_int(db_, "PRAGMA page_count") - pragma_int(db_, "PRAGMA freelist_count")) * page_size;
            if (used <= static_cast<std::int64_t>(options_.max_bytes)) break;
            const auto n = finished_runs(db_);
            if (n == 0) break;
            // Delete the share of runs the excess is of the whole, and a little more.
            const double share = static_cast<double>(used - static_cast<std::int64_t>(options_.max_bytes)) / static_cast<double>(used);
            const auto k = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(share * static_cast<double>(n) * 1.05)));
            const auto gone = delete_oldest(db_, k, path_);
            deleted += gone;
            if (gone == 0) break;
        }
    }
    if (deleted > 0) {
        sqlite3_exec(db_, "PRAGMA incremental_vacuum", nullptr, nullptr, nullptr);
        sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
        // One run out for one run in is routine; a large sweep (at start, after a change of
        // limits) is worth a line.
        if (deleted > 1)
            log_info("result store {}: retention deleted {} runs (keeping at most {} runs, {} days, {} bytes)", path_, deleted,
                     options_.max_runs, options_.max_age_days, options_.max_bytes);
        else
            log_debug("result store {}: retention deleted the oldest run", path_);
    }
    return deleted;
}

}  // namespace meshperf::daemon
