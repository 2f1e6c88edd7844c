#pragma once
/// Reading back what the CLI writes: a run result (`sweep`/`show --format json`, schema
/// meshperf.run/1) or a cluster matrix (`matrix --format json`, schema meshperf.matrix/1),
/// for `plot`, `report`, `plan` and `model`.
#include "analysis/outliers.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace meshperf::client {

/// A judged cluster matrix, as a matrix file holds it: what `report`, `plot`, `plan` and
/// `collective --predict --model` read back.
struct report_matrix {
    std::string title;                     ///< empty: "Cluster matrix, N hosts"
    std::vector<std::string> hosts;        ///< analysis.host_count names, or empty (by index)
    analysis::matrix_analysis analysis;
};

/// One file read back: a run or a judged matrix (hosts named as in the file).
struct loaded_file {
    std::string path;
    std::variant<core::run_result, report_matrix> content;

    bool is_run() const { return std::holds_alternative<core::run_result>(content); }
    const core::run_result& run() const { return std::get<core::run_result>(content); }
    const report_matrix& matrix() const { return std::get<report_matrix>(content); }
};

/// The judged matrix of a `meshperf matrix --format json` document, as it was judged (the
/// verdicts, medians and host tallies are read, not recomputed). Throws core::spec_error
/// naming the field when the document is not a matrix or is malformed.
report_matrix matrix_from_json(const nlohmann::json& doc);

/// The JSON document of file `path`. Throws client_error(exit_usage) naming the file when it
/// cannot be read or is not JSON.
nlohmann::json read_json_file(const std::string& path);

/// Reads and parses one file; the kind is told by its "schema" (or, without one, by its
/// fields: "points" for a run, "links" and "host_count" for a matrix). Throws
/// client_error(exit_usage) naming the file when it cannot be read or is neither (a
/// collective result is refused with where to read it: meshperf show FILE).
loaded_file load_result_file(const std::string& path);

}  // namespace meshperf::client
