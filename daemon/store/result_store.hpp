#pragma once
/// Run history in SQLite (WAL) under the state directory. A run is written when it starts,
/// after every point it measures and when it finishes, so a crash loses no measured point
/// and history survives a restart. Thread-safe (one connection behind a mutex).
///
/// Failures are kept apart from the daemon: a store that cannot be written (disk full,
/// read-only) keeps the results it could not write in memory, serves them, and retries them
/// on the next write and on a timer; a damaged file is moved aside at start and a fresh one
/// begun; a damaged row answers an error, never a made-up document.
#include "daemon/runtime/store_options.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct sqlite3;

namespace meshperf::daemon {

/// A read that found the store (or one row of it) damaged or failing. The message names the
/// file and says what to do; the API answers it with 500.
class store_read_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A write that failed (disk full, read-only, damaged). The document is kept in memory and
/// retried; the message names the file and SQLite's reason.
class store_write_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One page of GET /v1/runs.
struct run_list_query {
    std::size_t limit = 20;
    std::string peer;    ///< empty: every peer
    std::string before;  ///< cursor: a run id ("r-...") or a created_at; only runs older than it
};

/// Rows newest first, and the cursor of the next page (empty when this is the last).
struct run_list_page {
    std::vector<nlohmann::json> runs;
    std::string next;
};

/// Greatest `limit` of one page of GET /v1/runs.
inline constexpr std::size_t max_run_list_limit = 1000;

/// The error a run left queued or running by an earlier process gets at the next start.
inline constexpr const char* interrupted_error =
    "interrupted: the daemon stopped before this run finished (points measured before are kept)";

class result_store {
public:
    /// Opens (creating if needed) state_dir/meshperf.db and checks it (PRAGMA quick_check,
    /// or integrity_check when `options.integrity_check`): a damaged file is renamed to
    /// meshperf.db.corrupt-<UTC time> (with its -wal and -shm), logged, and a fresh store
    /// begun. Runs left queued or running by an earlier process become failed with
    /// `interrupted_error`, their points kept. A store that cannot be written (full disk)
    /// opens read-only, or in memory when not even that works, and says so in status();
    /// writing is retried. Throws std::runtime_error only when the directory cannot hold a
    /// database at all and nothing can be opened.
    explicit result_store(const std::string& state_dir, store_options options = {});
    ~result_store();
    result_store(const result_store&) = delete;
    result_store& operator=(const result_store&) = delete;

    /// Inserts or replaces a run document (schema meshperf.run/1 or meshperf.collective/1),
    /// after retrying the documents still pending. On failure the document is kept in memory
    /// (served by load() and list(), retried later) and store_write_error is thrown. A
    /// finished run's save applies the retention limits.
    void save(const nlohmann::json& run);
    /// The document of a run: a pending (unstored) one first, else the stored one; nullopt
    /// when there is none. Throws store_read_error when the row is damaged or SQLite fails.
    std::optional<nlohmann::json> load(const std::string& id) const;
    /// Newest first: id, state, peer, created_at, finished_at, error, points (count), tests,
    /// kind ("sweep" or "collective"; a collective's row also has its hosts and ops); an
    /// unstored run's row has "stored": false; a row whose document is damaged has
    /// "damaged": true and its error. Throws store_read_error when SQLite fails, and
    /// std::invalid_argument when `before` names no run.
    run_list_page list(const run_list_query& q) const;
    /// Compatibility: list({limit, peer}).runs.
    std::vector<nlohmann::json> list(std::size_t limit, const std::string& peer_filter) const;

    /// Whether a save would be attempted on disk now (false: read-only or in memory). This
    /// and the next three never wait for a query: they are asked on the I/O thread.
    bool writable() const;
    /// "writable", or why not ("read-only: database or disk is full: ...").
    std::string status() const;
    /// Whether the run's latest document is waiting in memory to be stored.
    bool is_pending(const std::string& id) const;
    /// Documents waiting in memory.
    std::size_t pending() const;
    /// Tries to store the pending documents (reopening the file for writing when needed).
    /// Returns how many are still pending. Called by the retry timer and by save().
    std::size_t retry_pending();
    /// Applies the retention limits now (start and after each finished run do it too);
    /// returns how many runs were deleted.
    std::size_t apply_retention();
    /// Where the database lives.
    const std::string& path() const { return path_; }

private:
    void open_checked();
    bool open_rw(std::string& why);         // caller holds m_; false with the reason when not writable
    void open_degraded(const std::string& why);
    void move_aside(const std::string& problem);
    bool probe_write(sqlite3* db, std::string& why);
    void add_checksum_column(sqlite3* db);
    void mark_interrupted();                // caller holds m_
    void write(const nlohmann::json& run);  // caller holds m_; throws store_write_error
    void keep_pending(const std::string& id, const nlohmann::json& run);
    void drop_pending(const std::string& id);
    std::size_t flush_pending();            // caller holds m_
    std::size_t retry_locked();             // caller holds m_
    std::size_t retention_locked();         // caller holds m_
    void retry_loop();
    void publish_state();                   // caller holds m_: copies the state below into shown_

    std::string path_;
    store_options options_;
    sqlite3* db_ = nullptr;
    bool rw_ = false;        // db_ is open for writing
    bool writable_ = false;  // and the last write went through
    bool checked_ = false;   // quick_check/integrity_check ran in this process
    bool marked_ = false;    // runs of earlier processes are marked interrupted
    std::chrono::steady_clock::time_point last_reopen_{};  // the last try to reopen for writing
    std::string status_ = "writable";
    std::map<std::string, nlohmann::json> pending_;  // id -> latest unstored document
    std::vector<std::string> pending_order_;          // ids, oldest first
    mutable std::mutex m_;
    // What writable(), status(), is_pending() and pending() answer, behind a mutex of its
    // own: /healthz and live documents ask on the I/O thread and must never wait for a query.
    struct shown_state {
        bool writable = false;
        std::string status;
        std::set<std::string> pending;
    } shown_;
    mutable std::mutex state_m_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::thread retry_;
};

}  // namespace meshperf::daemon
