#pragma once
/// Result schema: what a run measured, as values and as JSON (schema "meshperf.run/1",
/// documented in docs/result-schema.md). Every figure passes check_sane() before it is put
/// into a result.
#include "core/placement.hpp"
#include "core/link_counters.hpp"
#include "core/point_counters.hpp"
#include "core/rail_figures.hpp"
#include "core/run_header.hpp"
#include "core/run_spec.hpp"
#include "core/stats.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::core {

/// Version tag of the run result JSON.
inline constexpr const char* result_schema = "meshperf.run/1";

/// Identity of one daemon's host, reported in every result.
struct host_info {
    std::string address;        ///< as the run named it ("host:port")
    std::string hostname;
    std::string version;        ///< meshperf version
    std::string kernel;         ///< uname -r
    std::string cpu_model;
    unsigned cpu_count = 0;
};

/// Achieved precision of a point: the 95% CI half-width relative to the estimate, the wider
/// of the within-sample and the between-block view (see choose_interval in core/stats.hpp).
struct precision_info {
    bool adaptive = false;      ///< false when iterations or duration fixed the length
    double target = 0;          ///< relative half-width asked for (adaptive only)
    double achieved = 0;        ///< relative half-width reached; +inf is reported as null
    bool met = false;
    std::uint64_t batches = 0;  ///< latency: sample batches; bandwidth: intervals
    /// Which interval `achieved` is. Empty in results written before it was recorded, and
    /// for fixed-count bandwidth points (no interval is computed for them).
    std::optional<precision_method> method;
    std::uint64_t blocks = 0;   ///< block estimates behind the between-block interval
    double samples_achieved = std::numeric_limits<double>::infinity();  ///< within-sample relative half-width
    double blocks_achieved = std::numeric_limits<double>::infinity();   ///< between-block one; +inf: not assessed
    /// The sweep's drift (core/sweep_drift.hpp) for latency points of a drift-checked test;
    /// +inf: not assessed. `achieved` is this, method drift, when it is the widest.
    double drift_achieved = std::numeric_limits<double>::infinity();
    /// Each block's estimate, in time order. Latency: round-trip ns (the mean of the
    /// block's batch medians); bandwidth: Gbit/s of the flow whose precision is reported.
    std::vector<double> block_values;

    /// Records both views and the one reported (does not touch adaptive, target or met).
    void record(const interval_choice& c) {
        achieved = c.relative_half_width;
        method = c.method;
        blocks = c.blocks;
        samples_achieved = c.samples_relative_half_width;
        blocks_achieved = c.blocks_relative_half_width;
    }
};

/// CPU time used by a daemon during the measured window, in percent of one core
/// (200 = two cores busy).
struct cpu_usage {
    double local_percent = 0;
    double remote_percent = 0;
};

/// One direction of a bandwidth point, counted at the receiver.
struct flow_figures {
    std::string direction;          ///< "initiator->peer" or "peer->initiator"
    std::uint64_t bytes = 0;        ///< bytes received in the measured window
    double seconds = 0;             ///< measured window
    double gbit_per_s = 0;          ///< 10^9 bit/s
    double msg_per_s = 0;           ///< bytes / size / seconds
    double interval_min_gbit = 0;   ///< spread of per-interval rates
    double interval_max_gbit = 0;
    std::vector<double> stream_gbit_per_s;  ///< per stream, same window
};

/// One measured point.
struct point_result {
    test_kind test = test_kind::latency;
    std::uint64_t size_bytes = 0;
    // latency
    std::optional<summary> lat_ns;  ///< one-way = RTT / 2, in ns
    std::optional<summary> rtt_ns;  ///< round-trip, in ns
    // bandwidth / bidir
    double gbit_per_s = 0;          ///< sum over flows
    double msg_per_s = 0;           ///< sum over flows
    std::vector<flow_figures> flows;
    precision_info precision;
    cpu_usage cpu;
    double duration_s = 0;          ///< measured window (latency: sum of sampled RTTs' wall time)
    bool verified = false;          ///< data was actually checked against the pattern (at either end) and matched
    /// Bytes compared with the pattern and found equal, both ends together (0: none; a
    /// mismatch fails the point instead), and which end checked them: "initiator", "peer"
    /// or "both" (empty when nothing was checked). Absent from older results.
    std::uint64_t verified_bytes = 0;
    std::string verified_by;
    std::vector<std::string> warnings;
    std::optional<point_placement> placement;  ///< where the measuring threads ran; empty in older results
    /// TCP counters of the point's sending streams (bandwidth and bidir over TCP); empty in
    /// older results, for latency points, and when a sending side could not read them.
    std::optional<tcp_point_counters> tcp_counters;
    /// NIC and RDMA port counters of both ends around the point; empty in older results and
    /// where neither end could read them.
    link_counters link;
    /// Each rail's share when the run measured rails at once (spec.rails); empty otherwise,
    /// for latency points and in older results.
    std::vector<rail_figures> rails;
    /// Each rail's NIC counters on both ends (a run over rails; docs/counters.md), in the
    /// order of spec.rails; empty otherwise and in older results.
    std::vector<rail_link_counters> rail_links;
};

/// One reading of the reference: its median round trip, and after which point of the test
/// it was taken (0: the test's first point itself).
struct drift_reading {
    std::size_t after_point = 0;
    double rtt_ns_p50 = 0;
};

/// A point measured a second time because the curve fell from it to its neighbour by more
/// than both points' stated precision (core/sweep_drift.hpp).
struct point_recheck {
    std::uint64_t size_bytes = 0;
    double first_rtt_ns_p50 = 0;  ///< the point as reported
    double again_rtt_ns_p50 = 0;  ///< the second measurement
};

/// The drift check of one latency test of a run (core/sweep_drift.hpp).
struct sweep_drift {
    test_kind test = test_kind::latency;
    std::uint64_t size_bytes = 0;        ///< the reference: the test's first size
    std::vector<drift_reading> readings;  ///< in time order
    std::vector<point_recheck> rechecks;  ///< points measured again, in size order
    /// The 95% prediction interval of one more reading, relative to the readings' mean:
    /// t(0.975, n−1) · s · √(1 + 1/n) / mean for n readings of standard deviation s; +inf
    /// with fewer than drift_min_readings readings.
    double relative_half_width = 0;
};

/// A whole run as stored and returned.
struct run_result : run_header {
    host_info initiator;
    host_info peer;
    run_spec spec;
    std::vector<point_result> points;
    /// The drift checks of the run's latency tests (core/sweep_drift.hpp); empty when none ran.
    std::vector<sweep_drift> drift;
};

/// Throws insane_figure unless every figure of the point is finite and non-negative, rates
/// and latencies are positive, percentiles are ordered (min <= p50 <= ... <= max), and
/// gbit_per_s agrees with bytes / seconds and msg_per_s with bytes / size / seconds.
void check_sane(const point_result&);

nlohmann::json to_json(const summary&);
nlohmann::json to_json(const host_info&);
nlohmann::json to_json(const point_result&);
nlohmann::json to_json(const run_result&);
/// The drift checks' JSON form lives with the structs (the checks themselves are in
/// core/sweep_drift.hpp, which includes this header).
nlohmann::json to_json(const sweep_drift&);
summary summary_from_json(const nlohmann::json&);
host_info host_info_from_json(const nlohmann::json&);
point_result point_result_from_json(const nlohmann::json&);
/// Throws spec_error for a malformed drift entry.
sweep_drift sweep_drift_from_json(const nlohmann::json&);
/// Parses a result document; throws spec_error when the schema tag is missing or foreign.
run_result run_result_from_json(const nlohmann::json&);

/// One CSV field: as it is, or in double quotes (inner quotes doubled) when it holds a
/// comma, a quote or a newline.
std::string csv_quote(const std::string&);

/// CSV: a header row, then one row per point with the same figures as the JSON.
std::string csv_header();
std::string to_csv_row(const run_result&, const point_result&);

}  // namespace meshperf::core
