// The result store's reads: one run, and pages of the history (GET /v1/runs), with the
// documents still waiting in memory merged in, and damaged rows named instead of served.
#include "daemon/store/result_store.hpp"

#include "daemon/store/sqlite_statement.hpp"
#include "daemon/store/store_rows.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sqlite3.h>

namespace meshperf::daemon {

using nlohmann::json;

std::int64_t document_checksum(std::string_view text) {
    std::uint64_t h = 1469598103934665603ull;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return static_cast<std::int64_t>(h);
}

store_row store_row_of(const json& run) {
    store_row r;
    r.created_at = run.value("created_at", "");
    r.finished_at = run.contains("finished_at") && run["finished_at"].is_string() ? run["finished_at"].get<std::string>() : "";
    r.state = run.value("state", "");
    r.peer = run.contains("spec") && run["spec"].is_object() ? run["spec"].value("peer", "") : "";
    r.document = run.dump(-1, ' ', false, json::error_handler_t::replace);
    r.checksum = document_checksum(r.document);
    return r;
}

json list_row_of(const json& doc) {
    json row;
    row["id"] = doc.value("id", "");
    row["state"] = doc.value("state", "");
    row["peer"] = doc.contains("spec") && doc["spec"].is_object() ? doc["spec"].value("peer", "") : "";
    row["created_at"] = doc.value("created_at", "");
    row["finished_at"] = doc.contains("finished_at") && doc["finished_at"].is_string() ? doc["finished_at"] : json(nullptr);
    row["points"] = doc.contains("points") && doc["points"].is_array() ? doc["points"].size() : 0;
    row["error"] = doc.contains("error") && doc["error"].is_string() && !doc["error"].get<std::string>().empty() ? doc["error"] : json(nullptr);
    const json spec = doc.contains("spec") && doc["spec"].is_object() ? doc["spec"] : json::object();
    row["tests"] = spec.value("tests", json::array());
    const bool collective = doc.value("schema", "") == "meshperf.collective/1";
    row["kind"] = collective ? "collective" : "sweep";
    if (collective) {
        row["hosts"] = spec.value("hosts", json::array());
        row["ops"] = spec.value("ops", json::array());
    }
    return row;
}

namespace {

constexpr const char* damaged_advice =
    "stop meshperfd and start it again: it checks the file and moves a damaged one aside";

/// The document of a row, or the reason it cannot be served.
std::optional<json> parse_stored(const std::string& text, sqlite3_stmt* st, int checksum_col, std::string& why) {
    if (sqlite3_column_type(st, checksum_col) != SQLITE_NULL &&
        sqlite3_column_int64(st, checksum_col) != document_checksum(text)) {
        why = "its checksum does not match (bytes changed on disk)";
        return std::nullopt;
    }
    try {
        auto doc = json::parse(text);
        if (!doc.is_object()) {
            why = "it is not a JSON object";
            return std::nullopt;
        }
        return doc;
    } catch (const json::exception& e) {
        why = fmt::format("it does not parse ({})", e.what());
        return std::nullopt;
    }
}

}  // namespace

std::optional<json> result_store::load(const std::string& id) const {
    std::lock_guard lock(m_);
    if (const auto it = pending_.find(id); it != pending_.end()) return it->second;
    sqlite_statement st;
    int rc = sqlite3_prepare_v2(db_, "SELECT document, checksum FROM runs WHERE id = ?", -1, &st.s, nullptr);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st.s, 1, id.c_str(), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st.s);
    }
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW)
        throw store_read_error(fmt::format("the result store {} cannot be read: {} ({})", path_, sqlite3_errmsg(db_), damaged_advice));
    std::string why;
    auto doc = parse_stored(sqlite_column_text(st.s, 0), st.s, 1, why);
    if (!doc)
        throw store_read_error(fmt::format("run '{}' is damaged in the result store {}: {}; the rest of the history is served "
                                           "({})", id, path_, why, damaged_advice));
    return doc;
}

run_list_page result_store::list(const run_list_query& q) const {
    std::lock_guard lock(m_);
    // The cursor: a run id stands for its (created_at, id); anything else is a created_at.
    std::string before_created = q.before, before_id;
    if (q.before.rfind("r-", 0) == 0) {
        before_id = q.before;
        if (const auto it = pending_.find(q.before); it != pending_.end()) {
            before_created = it->second.value("created_at", "");
        } else {
            sqlite_statement st;
            int rc = sqlite3_prepare_v2(db_, "SELECT created_at FROM runs WHERE id = ?", -1, &st.s, nullptr);
            if (rc == SQLITE_OK) {
                sqlite3_bind_text(st.s, 1, q.before.c_str(), -1, SQLITE_TRANSIENT);
                rc = sqlite3_step(st.s);
            }
            if (rc == SQLITE_DONE)
                throw std::invalid_argument(fmt::format("before: no run '{}' on this daemon (pass the \"next\" of the previous page)", q.before));
            if (rc != SQLITE_ROW)
                throw store_read_error(fmt::format("the result store {} cannot be read: {} ({})", path_, sqlite3_errmsg(db_), damaged_advice));
            before_created = sqlite_column_text(st.s, 0);
        }
    }
    const auto older = [&](const std::string& created, const std::string& id) {
        if (q.before.empty()) return true;
        return created < before_created || (created == before_created && !before_id.empty() && id < before_id);
    };

    struct entry {
        std::string created, id;
        json row;
    };
    std::vector<entry> rows;
    sqlite_statement st;
    const char* sql = "SELECT id, state, peer, created_at, finished_at, document, checksum FROM runs"
                      " WHERE (?1 = '' OR peer = ?1) AND (?2 = '' OR created_at < ?2 OR (created_at = ?2 AND id < ?3))"
                      " ORDER BY created_at DESC, id DESC LIMIT ?4";
    int rc = sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st.s, 1, q.peer.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 2, before_created.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st.s, 3, before_id.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st.s, 4, static_cast<sqlite3_int64>(q.limit + 1));
        while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
            entry e{sqlite_column_text(st.s, 3), sqlite_column_text(st.s, 0), {}};
            if (pending_.count(e.id)) continue;  // the newer, unstored document is listed below
            std::string why;
            if (auto doc = parse_stored(sqlite_column_text(st.s, 5), st.s, 6, why)) {
                e.row = list_row_of(*doc);
            } else {
                e.row = {{"id", e.id}, {"state", sqlite_column_text(st.s, 1)}, {"peer", sqlite_column_text(st.s, 2)},
                         {"created_at", e.created}, {"finished_at", nullptr}, {"points", 0}, {"tests", json::array()},
                         {"kind", "sweep"}, {"damaged", true},
                         {"error", fmt::format("this run's stored document is damaged: {}; GET /v1/runs/{} answers 500", why, e.id)}};
            }
            rows.push_back(std::move(e));
        }
    }
    if (rc != SQLITE_DONE)
        throw store_read_error(fmt::format("the result store {} cannot be read: {} while listing runs ({})", path_,
                                           sqlite3_errmsg(db_), damaged_advice));
    for (const auto& [id, doc] : pending_) {
        auto row = list_row_of(doc);
        if (!q.peer.empty() && row["peer"] != q.peer) continue;
        const auto created = row["created_at"].get<std::string>();
        if (!older(created, id)) continue;
        row["stored"] = false;
        rows.push_back({created, id, std::move(row)});
    }
    std::sort(rows.begin(), rows.end(), [](const entry& a, const entry& b) {
        return a.created != b.created ? a.created > b.created : a.id > b.id;
    });
    run_list_page page;
    if (rows.size() > q.limit) {
        rows.resize(q.limit);
        page.next = rows.back().id;
    }
    for (auto& e : rows) page.runs.push_back(std::move(e.row));
    return page;
}

std::vector<json> result_store::list(std::size_t limit, const std::string& peer_filter) const {
    return list(run_list_query{limit, peer_filter, {}}).runs;
}

}  // namespace meshperf::daemon
