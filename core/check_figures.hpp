#pragma once
/// The figures a health check compares, taken from a run result, and their JSON form as
/// baselines use it. Pure functions, no I/O.
///
/// A run gives one figure per point: a latency point its median one-way latency (p50 of
/// RTT / 2) in microseconds, a bandwidth point its bandwidth in Gbit/s. Bidirectional points
/// give none (a check measures one direction at a time).
#include "core/check.hpp"
#include "core/counter_verdicts.hpp"
#include "core/result.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Version tag of a baseline document.
inline constexpr const char* baselines_schema = "meshperf.baselines/1";

/// One figure per latency or bandwidth point of `run`, in point order; points without a
/// positive finite figure are left out.
std::vector<check_figure> figures_of(const run_result& run);

/// A perfdata label from free words: every character but letters, digits and '_' becomes
/// '_' ("initiator veth0 rx_dropped" → "initiator_veth0_rx_dropped").
std::string perfdata_label_of(std::string_view text);

/// The counter verdicts of `run`'s points (core/counter_verdicts.hpp: the TCP retransmit
/// share and the NIC and RDMA port counters of both ends), each naming its point; points
/// without counters give none.
std::vector<counter_verdict> counter_verdicts_of(const run_result& run, const counter_thresholds& = {});

/// {"test": "latency", "size_bytes": 8, "lat_us": 23.1} or
/// {"test": "bandwidth", "size_bytes": 1048576, "gbit_per_s": 9.41}.
nlohmann::json to_json(const check_figure&);

/// Reads what to_json writes (other fields are ignored, so a baseline entry with peer,
/// transport, run_id and saved_at reads too). Throws spec_error naming what is wrong.
check_figure check_figure_from_json(const nlohmann::json&);

/// Baseline figures from a document: either a baseline document {"baselines": [entries]}
/// (as GET /v1/baselines and `meshperf baseline show --format json` write it), whose
/// entries are taken when their "peer" and "transport" (where present) equal `peer` and
/// `transport`; or a run result (schema meshperf.run/1, as `meshperf sweep --format json`
/// writes it), whose figures_of() are taken. Throws spec_error for anything else.
std::vector<check_figure> baseline_figures_from_json(const nlohmann::json& doc, const std::string& peer,
                                                     const std::string& transport);

}  // namespace meshperf::core
