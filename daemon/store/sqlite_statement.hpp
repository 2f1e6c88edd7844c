#pragma once
/// Small helpers the SQLite stores share (result_store, baseline_store).
#include <sqlite3.h>
#include <string>

namespace meshperf::daemon {

/// A prepared statement, finalized on scope exit.
struct sqlite_statement {
    sqlite3_stmt* s = nullptr;
    sqlite_statement() = default;
    sqlite_statement(const sqlite_statement&) = delete;
    sqlite_statement& operator=(const sqlite_statement&) = delete;
    ~sqlite_statement() { sqlite3_finalize(s); }
};

/// Column `i` of the current row as text; "" for NULL.
inline std::string sqlite_column_text(sqlite3_stmt* s, int i) {
    const auto* t = sqlite3_column_text(s, i);
    return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace meshperf::daemon
