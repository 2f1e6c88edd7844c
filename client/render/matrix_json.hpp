#pragma once
/// `meshperf matrix --format json` and `--format csv`, written link by link: each link's
/// object (or line) is made from the compact link_store record when it is written and
/// handed to a sink, so the document is never held whole (a full matrix of 2,048 hosts has
/// 4.19 M links). The text is the same as dumping the whole document with 2-space indent
/// (docs/result-schema.md, meshperf.matrix/1). Pure: the sink does the I/O.
#include "analysis/link_store.hpp"
#include "analysis/outliers.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/support/output_format.hpp"
#include "client/support/topology_file.hpp"

#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace meshperf::client {

/// What a matrix document is made of: the hosts, the verdict, the links as kept, what ran
/// (`meta`: schema, mode, rounds, ...), and with a topology (or in triage) what explains each
/// bad link.
struct matrix_document {
    std::span<const std::string> names;
    const analysis::matrix_analysis& a;
    const analysis::link_store& links;
    const nlohmann::json& meta;
    const analysis::group_verdict* groups = nullptr;  ///< with --topology or in triage
    const topology* topo = nullptr;                   ///< with --topology
};

/// Link i's object: analysis::to_json of its verdict with run_ids, retested, first (after a
/// retest) and its cause (with groups, bad reachable links only).
nlohmann::json matrix_link_json(const matrix_document& d, std::size_t i);

/// The JSON document, 2-space indented and ending in a newline, handed to `out` in pieces.
void write_matrix_json(const matrix_document& d, const text_sink& out);

/// The CSV (a header, then a line per link), handed to `out` a line at a time.
void write_matrix_csv(const matrix_document& d, const text_sink& out);

}  // namespace meshperf::client
