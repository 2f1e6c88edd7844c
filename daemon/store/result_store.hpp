#pragma once
/// Run history in SQLite (WAL) under the state directory. A run is written before it is
/// reported complete, so a client that goes away loses nothing and history survives a
/// restart. Thread-safe (one connection behind a mutex).
#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace meshperf::daemon {

class result_store {
public:
    /// Opens (creating if needed) state_dir/meshperf.db. Runs left queued or running by an
    /// earlier process are marked failed ("the daemon restarted"). Throws std::runtime_error
    /// with the path and SQLite's message.
    explicit result_store(const std::string& state_dir);
    ~result_store();
    result_store(const result_store&) = delete;
    result_store& operator=(const result_store&) = delete;

    /// Inserts or replaces a run document (schema meshperf.run/1 or meshperf.collective/1). Throws std::runtime_error
    /// (disk full, read-only) — the caller reports it and keeps the run in memory.
    void save(const nlohmann::json& run);
    /// The stored document of a run, if any.
    std::optional<nlohmann::json> load(const std::string& id) const;
    /// Newest first: id, state, peer, created_at, finished_at, error, points (count), tests, kind
    /// ("sweep" or "collective"; a collective's row also has its hosts and ops).
    std::vector<nlohmann::json> list(std::size_t limit, const std::string& peer_filter) const;
    /// Where the database lives.
    const std::string& path() const { return path_; }

private:
    void exec(const char* sql);
    std::string path_;
    sqlite3* db_ = nullptr;
    mutable std::mutex m_;
};

}  // namespace meshperf::daemon
