// The result store's lifecycle: opening and checking the file, moving a damaged one aside,
// the read-only and in-memory fallbacks, writes, and the documents waiting in memory.
// Reads are in run_list.cpp, retention in retention.cpp.
#include "daemon/store/result_store.hpp"

#include "core/run_state.hpp"

#include "daemon/runtime/host_facts.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/store/sqlite_statement.hpp"
#include "daemon/store/store_rows.hpp"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sqlite3.h>

namespace meshperf::daemon {

namespace {

/// SQLite's message, and the system's when there is one ("disk I/O error: No space left on device").
std::string reason_of(sqlite3* db) {
    std::string why = sqlite3_errmsg(db);
    if (const int e = sqlite3_system_errno(db); e != 0) why += fmt::format(" ({})", std::strerror(e));
    return why;
}

bool is_damage(int rc) {
    const int primary = rc & 0xff;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

/// Runs `sql` on `db`; false with SQLite's message (and its code in `rc`) on failure.
bool try_exec(sqlite3* db, const char* sql, std::string& why, int& rc) {
    char* err = nullptr;
    rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (rc == SQLITE_OK) return true;
    why = err ? err : sqlite3_errstr(rc);
    if (const int e = sqlite3_system_errno(db); e != 0) why += fmt::format(" ({})", std::strerror(e));
    sqlite3_free(err);
    return false;
}

/// "ok", or what PRAGMA quick_check / integrity_check found. `rc` gets SQLite's code when the
/// check could not even run (SQLITE_NOTADB for a zeroed header).
std::string check_database(sqlite3* db, bool full, int& rc) {
    sqlite_statement st;
    rc = sqlite3_prepare_v2(db, full ? "PRAGMA integrity_check(20)" : "PRAGMA quick_check(20)", -1, &st.s, nullptr);
    if (rc != SQLITE_OK) return reason_of(db);
    std::string found;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        const auto line = sqlite_column_text(st.s, 0);
        if (line == "ok") continue;
        found += (found.empty() ? "" : "; ") + line;
    }
    if (rc != SQLITE_DONE) return reason_of(db);
    rc = SQLITE_OK;
    return found.empty() ? "ok" : found;
}

std::string uri_of(const std::string& path, const char* params) {
    std::string out = "file:";
    for (const char c : path) {
        if (c == '%' || c == '?' || c == '#') out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        else out += c;
    }
    return out + params;
}

}  // namespace

result_store::result_store(const std::string& state_dir, store_options options)
    : path_(state_dir + "/meshperf.db"), options_(options) {
    open_checked();
    retry_ = std::thread([this] { retry_loop(); });
}

result_store::~result_store() {
    {
        std::lock_guard lock(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    retry_.join();
    std::lock_guard lock(m_);
    if (!pending_.empty()) {
        if (!rw_) {
            std::string why;
            sqlite3_close(db_);
            db_ = nullptr;
            if (!open_rw(why)) db_ = nullptr;
        }
        if (db_ && rw_) flush_pending();
        if (!pending_.empty()) {
            std::string ids;
            for (const auto& id : pending_order_) ids += (ids.empty() ? "" : ", ") + id;
            log_error("result store {}: {} results could not be stored before the daemon stopped and are lost ({}): {}",
                      path_, pending_.size(), status_, ids);
        }
    }
    sqlite3_close(db_);
}

void result_store::open_checked() {
    std::lock_guard lock(m_);
    std::string why;
    if (!open_rw(why)) open_degraded(why);
    publish_state();
}

void result_store::move_aside(const std::string& problem) {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    const auto aside = fmt::format("{}.corrupt-{:%Y%m%dT%H%M%SZ}", path_, fmt::gmtime(now));
    std::error_code ec;
    std::filesystem::rename(path_, aside, ec);
    if (ec)
        throw std::runtime_error(fmt::format("result store {} is damaged ({}) and cannot be moved aside to {}: {}; move or "
                                             "delete it by hand and start meshperfd again",
                                             path_, problem, aside, ec.message()));
    for (const char* suffix : {"-wal", "-shm"}) {
        std::error_code e2;
        if (std::filesystem::exists(path_ + suffix, e2)) std::filesystem::rename(path_ + suffix, aside + suffix, e2);
    }
    log_error("result store {} is damaged ({}): moved it to {} (with its -wal and -shm files) and started a fresh, empty "
              "store at {}; salvage what it holds with `sqlite3 {} .recover | sqlite3 recovered.db`",
              path_, problem, aside, path_, aside);
}

bool result_store::open_rw(std::string& why) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        sqlite3* db = nullptr;
        int rc = sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
        if (rc != SQLITE_OK) {
            why = db ? reason_of(db) : "out of memory";
            sqlite3_close(db);
            if (is_damage(rc) && attempt == 0) {
                move_aside(why);
                continue;
            }
            return false;
        }
        sqlite3_busy_timeout(db, 5000);
        std::string damage;
        if (!checked_) {
            const auto found = check_database(db, options_.integrity_check, rc);
            if (rc == SQLITE_OK && found != "ok") damage = found;
            else if (is_damage(rc)) damage = found;
            else if (rc != SQLITE_OK) {
                why = found;
                sqlite3_close(db);
                return false;
            }
        }
        // auto_vacuum must be chosen before the first table: it only takes on a new file.
        const char* setup[] = {"PRAGMA auto_vacuum=INCREMENTAL",
                               "PRAGMA journal_mode=WAL",
                               "PRAGMA synchronous=NORMAL",
                               "PRAGMA journal_size_limit=4194304",
                               "CREATE TABLE IF NOT EXISTS runs ("
                               " id TEXT PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT, state TEXT NOT NULL,"
                               " peer TEXT NOT NULL, document TEXT NOT NULL, checksum INTEGER)",
                               "CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at)",
                               "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT)"};
        for (const char* sql : setup) {
            if (!damage.empty()) break;
            if (!try_exec(db, sql, why, rc)) {
                if (is_damage(rc)) damage = why;
                else {
                    sqlite3_close(db);
                    return false;
                }
            }
        }
        if (damage.empty()) add_checksum_column(db);
        if (!damage.empty()) {
            sqlite3_close(db);
            if (attempt > 0) {
                why = fmt::format("the fresh store is damaged too: {}", damage);
                return false;
            }
            move_aside(damage);
            continue;
        }
        checked_ = true;
        // A real write: a full disk shows here rather than at the first result.
        if (!probe_write(db, why)) {
            sqlite3_close(db);
            return false;
        }
        db_ = db;
        rw_ = true;
        writable_ = true;
        status_ = "writable";
        try {
            if (!marked_) mark_interrupted();
            marked_ = true;
        } catch (const std::exception& e) {
            why = e.what();
            sqlite3_close(db_);
            db_ = nullptr;
            rw_ = writable_ = false;
            return false;
        }
        try {
            retention_locked();
        } catch (const std::exception& e) {
            log_warn("result store {}: retention: {}", path_, e.what());
        }
        return true;
    }
    return false;
}

bool result_store::probe_write(sqlite3* db, std::string& why) {
    sqlite_statement st;
    const auto now = utc_now_rfc3339();
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO store_meta (key, value) VALUES ('opened_at', ?)", -1, &st.s, nullptr) ==
        SQLITE_OK) {
        sqlite3_bind_text(st.s, 1, now.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st.s) == SQLITE_DONE) return true;
    }
    why = reason_of(db);
    return false;
}

void result_store::add_checksum_column(sqlite3* db) {
    // Stores from before the checksum column get it; their rows stay unchecked (NULL).
    sqlite_statement st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'checksum'", -1, &st.s, nullptr) != SQLITE_OK)
        return;
    if (sqlite3_step(st.s) == SQLITE_ROW) return;
    std::string why;
    int rc;
    if (!try_exec(db, "ALTER TABLE runs ADD COLUMN checksum INTEGER", why, rc))
        log_warn("result store {}: cannot add the checksum column ({}): rows are served unchecked", path_, why);
}

void result_store::open_degraded(const std::string& why) {
    // Read what is there without writing: read-only first; immutable when even the -shm file
    // cannot be made (full disk); an empty store in memory when there is no file to read.
    struct attempt {
        const char* params;
        const char* mode;
    };
    for (const attempt a : {attempt{"?mode=ro", "read-only"}, attempt{"?mode=ro&immutable=1", "read-only"}}) {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(uri_of(path_, a.params).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX,
                            nullptr) == SQLITE_OK) {
            std::string e;
            int rc;
            if (try_exec(db, "SELECT count(*) FROM runs", e, rc)) {
                db_ = db;
                status_ = fmt::format("{}: {}", a.mode, why);
                break;
            }
        }
        sqlite3_close(db);
    }
    if (!db_) {
        sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_FULLMUTEX, nullptr);
        std::string e;
        int rc;
        if (!db_ || !try_exec(db_, "CREATE TABLE runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT,"
                                   " state TEXT NOT NULL, peer TEXT NOT NULL, document TEXT NOT NULL, checksum INTEGER)", e, rc))
            throw std::runtime_error(fmt::format("cannot open the result store {}: {} (check --state-dir exists and is writable)",
                                                 path_, why));
        status_ = fmt::format("in memory (no history): {}", why);
    }
    rw_ = writable_ = false;
    log_error("result store {} cannot be written ({}): serving the history {} and keeping new results in memory, retried "
              "every {} s; free space in {} (or fix its permissions) and it is written again",
              path_, why, status_.rfind("read-only", 0) == 0 ? "read-only" : "from memory (none)", options_.retry_interval_s,
              std::filesystem::path(path_).parent_path().string());
}

void result_store::mark_interrupted() {
    std::vector<std::pair<std::string, std::string>> rows;
    {
        sqlite_statement st;
        if (sqlite3_prepare_v2(db_, "SELECT id, document FROM runs WHERE state IN ('queued', 'running')", -1, &st.s, nullptr) != SQLITE_OK)
            throw store_write_error(fmt::format("result store {}: {}", path_, sqlite3_errmsg(db_)));
        int rc;
        while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) rows.emplace_back(sqlite_column_text(st.s, 0), sqlite_column_text(st.s, 1));
        if (rc != SQLITE_DONE) throw store_write_error(fmt::format("result store {}: {}", path_, sqlite3_errmsg(db_)));
    }
    if (rows.empty()) return;
    std::string why;
    int rc;
    if (!try_exec(db_, "BEGIN IMMEDIATE", why, rc)) throw store_write_error(fmt::format("result store {}: {}", path_, why));
    try {
        for (const auto& [id, text] : rows) {
            auto doc = nlohmann::json::parse(text, nullptr, false);
            if (doc.is_object()) {
                doc["state"] = core::to_string(core::run_state::failed);
                doc["error"] = interrupted_error;
                write(doc);
            } else {
                sqlite_statement st;
                sqlite3_prepare_v2(db_, "UPDATE runs SET state = 'failed' WHERE id = ?", -1, &st.s, nullptr);
                sqlite3_bind_text(st.s, 1, id.c_str(), -1, SQLITE_TRANSIENT);
                if (sqlite3_step(st.s) != SQLITE_DONE) throw store_write_error(fmt::format("result store {}: {}", path_, sqlite3_errmsg(db_)));
            }
        }
        if (!try_exec(db_, "COMMIT", why, rc)) throw store_write_error(fmt::format("result store {}: {}", path_, why));
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    log_warn("result store {}: {} runs an earlier meshperfd left unfinished are marked failed (interrupted), their measured "
             "points kept", path_, rows.size());
}

void result_store::write(const nlohmann::json& run) {
    const auto id = run.value("id", "");
    if (!rw_) throw store_write_error(fmt::format("cannot store run {} in {}: the store is {}", id, path_, status_));
    sqlite_statement st;
    const char* sql = "INSERT OR REPLACE INTO runs (id, created_at, finished_at, state, peer, document, checksum)"
                      " VALUES (?,?,?,?,?,?,?)";
    const auto row = store_row_of(run);
    int rc = sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st.s, 1, id.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 2, row.created_at.c_str(), -1, SQLITE_TRANSIENT);
        if (row.finished_at.empty()) sqlite3_bind_null(st.s, 3);
        else sqlite3_bind_text(st.s, 3, row.finished_at.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 4, row.state.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 5, row.peer.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 6, row.document.c_str(), static_cast<int>(row.document.size()), SQLITE_TRANSIENT);
        sqlite3_bind_int64(st.s, 7, row.checksum);
        rc = sqlite3_step(st.s);
    }
    if (rc != SQLITE_DONE) {
        const std::string msg = reason_of(db_);
        writable_ = false;
        status_ = fmt::format("not writable: {}{}", msg, is_damage(rc) ? " (the file is damaged: restart meshperfd to move it aside)" : "");
        throw store_write_error(fmt::format("cannot store run {} in {}: {}", id, path_, msg));
    }
    if (!writable_) log_info("result store {} is writable again", path_);
    writable_ = true;
    status_ = "writable";
}

void result_store::keep_pending(const std::string& id, const nlohmann::json& run) {
    if (!pending_.count(id)) pending_order_.push_back(id);
    pending_[id] = run;
    while (pending_.size() > options_.max_pending && !pending_order_.empty()) {
        const auto oldest = pending_order_.front();
        pending_order_.erase(pending_order_.begin());
        pending_.erase(oldest);
        log_error("result store {}: run {} given up: {} unstored results are kept in memory at most ({})", path_, oldest,
                  options_.max_pending, status_);
    }
}

void result_store::drop_pending(const std::string& id) {
    if (pending_.erase(id)) std::erase(pending_order_, id);
}

std::size_t result_store::flush_pending() {
    if (!rw_) return pending_.size();
    while (!pending_order_.empty()) {
        const auto id = pending_order_.front();
        try {
            write(pending_.at(id));
        } catch (const store_write_error&) {
            break;
        }
        drop_pending(id);
        log_info("result store {}: run {} stored after all", path_, id);
    }
    return pending_.size();
}

void result_store::save(const nlohmann::json& run) {
    std::lock_guard lock(m_);
    struct publish_at_exit {
        result_store& s;
        ~publish_at_exit() { s.publish_state(); }
    } publish{*this};
    const auto id = run.value("id", "");
    drop_pending(id);  // this document supersedes an unstored one of the same run
    retry_locked();    // older unstored ones first (reopening a read-only store, at most once a second)
    try {
        write(run);
    } catch (const store_write_error&) {
        keep_pending(id, run);
        throw;
    }
    if (!core::recorded_state::from_text(run.value("state", "")).in_progress()) {
        try {
            retention_locked();
        } catch (const std::exception& e) {
            log_warn("result store {}: retention: {}", path_, e.what());
        }
    }
}

std::size_t result_store::retry_pending() {
    std::lock_guard lock(m_);
    const auto left = retry_locked();
    publish_state();
    return left;
}

std::size_t result_store::retry_locked() {
    if (!rw_) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_reopen_ < std::chrono::seconds(1)) return pending_.size();
        last_reopen_ = now;
        sqlite3* degraded = db_;
        db_ = nullptr;
        std::string why;
        if (!open_rw(why)) {
            db_ = degraded;  // still not writable: keep serving what could be read
            return pending_.size();
        }
        sqlite3_close(degraded);
        log_info("result store {} is open for writing again", path_);
    }
    return flush_pending();
}

void result_store::retry_loop() {
    std::unique_lock lock(m_);
    const auto interval = std::chrono::duration<double>(options_.retry_interval_s);
    while (!stopping_) {
        cv_.wait_for(lock, interval, [&] { return stopping_; });
        if (stopping_) break;
        if (!rw_ || !pending_.empty()) {
            retry_locked();
            publish_state();
        }
    }
}

void result_store::publish_state() {
    std::lock_guard lock(state_m_);
    shown_.writable = rw_ && writable_;
    shown_.status = status_;
    shown_.pending.clear();
    for (const auto& [id, _] : pending_) shown_.pending.insert(id);
}

bool result_store::writable() const {
    std::lock_guard lock(state_m_);
    return shown_.writable;
}

std::string result_store::status() const {
    std::lock_guard lock(state_m_);
    return shown_.status;
}

bool result_store::is_pending(const std::string& id) const {
    std::lock_guard lock(state_m_);
    return shown_.pending.count(id) > 0;
}

std::size_t result_store::pending() const {
    std::lock_guard lock(state_m_);
    return shown_.pending.size();
}

}  // namespace meshperf::daemon
