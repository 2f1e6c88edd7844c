#pragma once
/// Human-readable renderings: aligned tables of a run's points (sizes in IEC units, rates in
/// Gbit/s, latency in µs), run lists and daemon info.
#include "core/result.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::client {

/// A simple aligned text table: first row is the header; numeric-looking cells align right.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

/// The run as tables: a header line (run id, hosts, state), one table per test kind, then
/// warnings and the error if any.
std::string render_run_table(const core::run_result& run);

/// One line for a point as it arrives (progress display).
std::string point_progress_line(const core::point_result& p, std::size_t index, std::size_t total);

/// The most characters of a run's error the `runs` table shows (then "…"; JSON has it all).
inline constexpr std::size_t run_list_error_width = 60;

/// GET /v1/runs list as a table: sweeps with their peer, collectives (row "kind":
/// "collective") with their count of hosts, errors cut to run_list_error_width.
std::string render_run_list(const nlohmann::json& list);

/// GET /v1/info as readable text.
std::string render_info(const nlohmann::json& info);
/// The "rails:" section of `info`'s table: one row per rail of /v1/info's rails (name, RDMA
/// device, addresses, rate, MTU, link, nearest GPUs); "rails: none" for an empty list; empty
/// when the daemon lists no rails at all (an older one).
std::string render_info_rails(const nlohmann::json& info);

/// The whole run as CSV: header row, then a row per point.
std::string render_csv(const core::run_result& run);

}  // namespace meshperf::client
