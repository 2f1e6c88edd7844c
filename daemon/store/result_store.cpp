#include "daemon/store/result_store.hpp"

#include "daemon/store/sqlite_statement.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <stdexcept>

namespace meshperf::daemon {

result_store::result_store(const std::string& state_dir) : path_(state_dir + "/meshperf.db") {
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
        SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw std::runtime_error(fmt::format("cannot open the result store {}: {} (check --state-dir exists and is writable)", path_, msg));
    }
    sqlite3_busy_timeout(db_, 5000);
    try {
        exec("PRAGMA journal_mode=WAL");
        exec("PRAGMA synchronous=NORMAL");
        exec("CREATE TABLE IF NOT EXISTS runs ("
             " id TEXT PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT, state TEXT NOT NULL,"
             " peer TEXT NOT NULL, document TEXT NOT NULL)");
        exec("CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at)");
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
    // Runs an earlier process left unfinished can never finish now.
    for (auto& doc : list(1'000'000, "")) {
        if (doc["state"] != "queued" && doc["state"] != "running") continue;
        if (auto full = load(doc["id"].get<std::string>())) {
            (*full)["state"] = "failed";
            (*full)["error"] = "the daemon restarted before this run finished";
            save(*full);
        }
    }
}

result_store::~result_store() { sqlite3_close(db_); }

void result_store::exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw std::runtime_error(fmt::format("result store {}: {}", path_, msg));
    }
}

void result_store::save(const nlohmann::json& run) {
    std::lock_guard lock(m_);
    sqlite_statement st;
    const char* sql = "INSERT OR REPLACE INTO runs (id, created_at, finished_at, state, peer, document) VALUES (?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK)
        throw std::runtime_error(fmt::format("result store {}: {}", path_, sqlite3_errmsg(db_)));
    const auto id = run.value("id", "");
    const auto created = run.value("created_at", "");
    const auto finished = run.contains("finished_at") && run["finished_at"].is_string() ? run["finished_at"].get<std::string>() : "";
    const auto state = run.value("state", "");
    const auto peer = run.contains("spec") ? run["spec"].value("peer", "") : "";
    const auto doc = run.dump();
    sqlite3_bind_text(st.s, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 2, created.c_str(), -1, SQLITE_TRANSIENT);
    if (finished.empty()) sqlite3_bind_null(st.s, 3);
    else sqlite3_bind_text(st.s, 3, finished.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 4, state.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 5, peer.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 6, doc.c_str(), static_cast<int>(doc.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) != SQLITE_DONE)
        throw std::runtime_error(fmt::format("cannot store run {} in {}: {}", id, path_, sqlite3_errmsg(db_)));
}

std::optional<nlohmann::json> result_store::load(const std::string& id) const {
    std::lock_guard lock(m_);
    sqlite_statement st;
    if (sqlite3_prepare_v2(db_, "SELECT document FROM runs WHERE id = ?", -1, &st.s, nullptr) != SQLITE_OK) return std::nullopt;
    sqlite3_bind_text(st.s, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) != SQLITE_ROW) return std::nullopt;
    return nlohmann::json::parse(sqlite_column_text(st.s, 0), nullptr, false);
}

std::vector<nlohmann::json> result_store::list(std::size_t limit, const std::string& peer_filter) const {
    std::lock_guard lock(m_);
    sqlite_statement st;
    const char* sql = peer_filter.empty()
                          ? "SELECT id, state, peer, created_at, finished_at, document FROM runs ORDER BY created_at DESC, id DESC LIMIT ?"
                          : "SELECT id, state, peer, created_at, finished_at, document FROM runs WHERE peer = ? ORDER BY created_at DESC, id DESC LIMIT ?";
    std::vector<nlohmann::json> out;
    if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK) return out;
    int i = 1;
    if (!peer_filter.empty()) sqlite3_bind_text(st.s, i++, peer_filter.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st.s, i, static_cast<sqlite3_int64>(limit));
    while (sqlite3_step(st.s) == SQLITE_ROW) {
        nlohmann::json row;
        row["id"] = sqlite_column_text(st.s, 0);
        row["state"] = sqlite_column_text(st.s, 1);
        row["peer"] = sqlite_column_text(st.s, 2);
        row["created_at"] = sqlite_column_text(st.s, 3);
        const auto fin = sqlite_column_text(st.s, 4);
        row["finished_at"] = fin.empty() ? nlohmann::json(nullptr) : nlohmann::json(fin);
        const auto doc = nlohmann::json::parse(sqlite_column_text(st.s, 5), nullptr, false);
        row["points"] = doc.is_object() && doc.contains("points") ? doc["points"].size() : 0;
        row["error"] = doc.is_object() && doc.contains("error") ? doc["error"] : nlohmann::json(nullptr);
        row["tests"] = doc.is_object() && doc.contains("spec") ? doc["spec"].value("tests", nlohmann::json::array()) : nlohmann::json::array();
        const bool collective = doc.is_object() && doc.value("schema", "") == "meshperf.collective/1";
        row["kind"] = collective ? "collective" : "sweep";
        if (collective) {
            row["hosts"] = doc["spec"].value("hosts", nlohmann::json::array());
            row["ops"] = doc["spec"].value("ops", nlohmann::json::array());
        }
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace meshperf::daemon
