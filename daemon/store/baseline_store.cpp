#include "daemon/store/baseline_store.hpp"

#include "daemon/runtime/log.hpp"
#include "daemon/store/sqlite_statement.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <stdexcept>

namespace meshperf::daemon {
namespace {

const char* test_name(core::figure_kind k) { return k == core::figure_kind::bandwidth ? "bandwidth" : "latency"; }

}  // namespace

nlohmann::json to_json(const baseline_entry& e) {
    nlohmann::json j{{"peer", e.peer}, {"transport", e.transport}, {"test", test_name(e.figure.kind)},
                     {"size_bytes", e.figure.size_bytes}};
    j[e.figure.kind == core::figure_kind::bandwidth ? "gbit_per_s" : "lat_us"] = e.figure.value;
    j["run_id"] = e.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.run_id);
    j["saved_at"] = e.saved_at;
    return j;
}

baseline_store::baseline_store(const std::string& db_path) : path_(db_path) {
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
        SQLITE_OK) {
        unavailable_ = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        log_error("baseline store {} cannot be opened ({}): /v1/baselines answers 500 until meshperfd is restarted with a "
                  "writable state directory", path_, unavailable_);
        return;
    }
    sqlite3_busy_timeout(db_, 5000);
    try {
        exec("PRAGMA journal_mode=WAL");
        exec("CREATE TABLE IF NOT EXISTS baselines ("
             " peer TEXT NOT NULL, transport TEXT NOT NULL, test TEXT NOT NULL, size_bytes INTEGER NOT NULL,"
             " value REAL NOT NULL, run_id TEXT, saved_at TEXT NOT NULL,"
             " PRIMARY KEY (peer, transport, test, size_bytes))");
    } catch (const std::exception& e) {
        // A full disk or a read-only store: reading may still work, writing says why not;
        // without the table there is nothing to read.
        if (!has_table()) unavailable_ = fmt::format("{} (free space in its directory and restart meshperfd)", e.what());
        log_error("{}: baselines may not be readable or writable until meshperfd is restarted with space in its state "
                  "directory", e.what());
    }
}

baseline_store::~baseline_store() { sqlite3_close(db_); }

bool baseline_store::has_table() const {
    sqlite_statement st;
    return sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'baselines'", -1, &st.s,
                              nullptr) == SQLITE_OK &&
           sqlite3_step(st.s) == SQLITE_ROW;
}

void baseline_store::check_open() const {
    if (!db_ || !unavailable_.empty()) throw std::runtime_error(fmt::format("baseline store {} is not available: {}", path_, unavailable_));
}

void baseline_store::exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw std::runtime_error(fmt::format("baseline store {}: {}", path_, msg));
    }
}

void baseline_store::save(const std::string& peer, const std::string& transport, std::span<const core::check_figure> figures,
                          const std::string& run_id, const std::string& saved_at) {
    std::lock_guard lock(m_);
    check_open();
    exec("BEGIN IMMEDIATE");
    try {
        for (const auto& f : figures) {
            sqlite_statement st;
            const char* sql = "INSERT OR REPLACE INTO baselines (peer, transport, test, size_bytes, value, run_id, saved_at)"
                              " VALUES (?,?,?,?,?,?,?)";
            if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK)
                throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
            sqlite3_bind_text(st.s, 1, peer.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st.s, 2, transport.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st.s, 3, test_name(f.kind), -1, SQLITE_STATIC);
            sqlite3_bind_int64(st.s, 4, static_cast<sqlite3_int64>(f.size_bytes));
            sqlite3_bind_double(st.s, 5, f.value);
            if (run_id.empty()) sqlite3_bind_null(st.s, 6);
            else sqlite3_bind_text(st.s, 6, run_id.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st.s, 7, saved_at.c_str(), -1, SQLITE_TRANSIENT);
            if (sqlite3_step(st.s) != SQLITE_DONE)
                throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
        }
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

std::vector<baseline_entry> baseline_store::load(const std::string& peer, const std::string& transport) const {
    std::lock_guard lock(m_);
    check_open();
    sqlite_statement st;
    const char* sql = "SELECT peer, transport, test, size_bytes, value, run_id, saved_at FROM baselines"
                      " WHERE (?1 = '' OR peer = ?1) AND (?2 = '' OR transport = ?2)"
                      " ORDER BY peer, transport, test, size_bytes";
    if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK)
        throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
    sqlite3_bind_text(st.s, 1, peer.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 2, transport.c_str(), -1, SQLITE_TRANSIENT);
    std::vector<baseline_entry> out;
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        baseline_entry e;
        e.peer = sqlite_column_text(st.s, 0);
        e.transport = sqlite_column_text(st.s, 1);
        e.figure.kind = sqlite_column_text(st.s, 2) == "bandwidth" ? core::figure_kind::bandwidth : core::figure_kind::latency;
        e.figure.size_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(st.s, 3));
        e.figure.value = sqlite3_column_double(st.s, 4);
        e.run_id = sqlite_column_text(st.s, 5);
        e.saved_at = sqlite_column_text(st.s, 6);
        out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
    return out;
}

std::size_t baseline_store::remove(const std::string& peer, const std::string& transport) {
    std::lock_guard lock(m_);
    check_open();
    sqlite_statement st;
    const char* sql = "DELETE FROM baselines WHERE peer = ?1 AND (?2 = '' OR transport = ?2)";
    if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK)
        throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
    sqlite3_bind_text(st.s, 1, peer.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 2, transport.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) != SQLITE_DONE) throw std::runtime_error(fmt::format("baseline store {}: {}", path_, sqlite3_errmsg(db_)));
    return static_cast<std::size_t>(sqlite3_changes(db_));
}

}  // namespace meshperf::daemon
