#pragma once
/// Baselines per peer, transport, test and size: the figures `meshperf check --baseline
/// stored` compares against. A table of its own in the result store's SQLite file
/// (state_dir/meshperf.db, WAL), on a connection of its own. Thread-safe.
#include "core/check.hpp"

#include <cstddef>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

struct sqlite3;

namespace meshperf::daemon {

/// One stored baseline figure.
struct baseline_entry {
    std::string peer;        ///< "host:port", as runs name it
    std::string transport;   ///< "tcp", "rdma"
    core::check_figure figure;
    std::string run_id;      ///< the run it came from; empty when given as figures
    std::string saved_at;    ///< RFC 3339 UTC
};

/// {"peer", "transport", "test", "size_bytes", "gbit_per_s" or "lat_us", "run_id", "saved_at"}.
nlohmann::json to_json(const baseline_entry&);

class baseline_store {
public:
    /// Opens (creating the table if needed) the SQLite database at `db_path`. A file that
    /// cannot be opened or written (full disk) is logged, not thrown: the calls then throw
    /// std::runtime_error with the path and SQLite's message, so the daemon still starts.
    explicit baseline_store(const std::string& db_path);
    ~baseline_store();
    baseline_store(const baseline_store&) = delete;
    baseline_store& operator=(const baseline_store&) = delete;

    /// Stores figures for (peer, transport) in one transaction; each replaces the figure of
    /// the same test and size, others are kept. Throws std::runtime_error.
    void save(const std::string& peer, const std::string& transport, std::span<const core::check_figure> figures,
              const std::string& run_id, const std::string& saved_at);
    /// Entries, ordered by peer, transport, test, size. Empty filters match everything.
    std::vector<baseline_entry> load(const std::string& peer, const std::string& transport) const;
    /// Deletes the entries of a peer (and transport, when given); returns how many.
    std::size_t remove(const std::string& peer, const std::string& transport);

private:
    void exec(const char* sql);
    void check_open() const;
    bool has_table() const;
    std::string path_;
    std::string unavailable_;  // why the store cannot be used; empty when it can
    sqlite3* db_ = nullptr;
    mutable std::mutex m_;
};

}  // namespace meshperf::daemon
