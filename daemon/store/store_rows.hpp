#pragma once
/// How a run document becomes a row of the runs table and a row of GET /v1/runs, shared by
/// the store's writes (result_store.cpp) and reads (run_list.cpp). No I/O.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace meshperf::daemon {

/// FNV-1a (64 bit) of a stored document, kept beside it so a byte flipped on disk is found
/// even where the text still parses.
std::int64_t document_checksum(std::string_view text);

/// The columns of one run's row.
struct store_row {
    std::string created_at, finished_at, state, peer;
    std::string document;  ///< the JSON text; invalid UTF-8 from outside replaced by U+FFFD
    std::int64_t checksum = 0;
};

/// The row a run document is stored as.
store_row store_row_of(const nlohmann::json& run);

/// The summary row GET /v1/runs lists for a run document: id, state, peer, created_at,
/// finished_at, points, error, tests, kind (and hosts, ops for a collective).
nlohmann::json list_row_of(const nlohmann::json& doc);

}  // namespace meshperf::daemon
