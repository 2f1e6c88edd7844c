#pragma once
/// `meshperf check --collective OP --hosts ... (--min-busbw X | --baseline FILE)`: a short
/// collective judged as a Nagios plugin (client/commands/check.hpp's scheme: exit 0 OK,
/// 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one status line with perfdata). CRITICAL when busbw at
/// the size is below --min-busbw (GB/s, nccl-tests' unit), below --crit × the baseline's
/// busbw, when a rank counted wrong elements or a rank's port went down (its counters);
/// WARNING below --warn × the baseline's or when a rank's error counter moved;
/// UNKNOWN when the check could not be made (bad options, a host unreachable, the run
/// failed). The verdict can also go to a node_exporter textfile (--prom-file). Everything
/// about judging a collective is here: the verdicts (pure, tested alone) and the check's run;
/// client/commands/check.cpp only parses the command line and calls run_collective_check.
#include "client/collective/spec_options.hpp"
#include "client/support/output_format.hpp"
#include "core/check.hpp"
#include "core/collective/result.hpp"
#include "core/counter_verdicts.hpp"
#include "transport/tls.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace meshperf::client {

/// Size of the check's collective when --size is not given.
inline constexpr const char* default_collective_check_size = "16M";

/// What a collective check is judged against: --min-busbw, a baseline, or both.
struct collective_limits {
    std::optional<double> min_busbw;       ///< GB/s: CRITICAL below
    std::optional<double> baseline_busbw;  ///< GB/s, the baseline's busbw at the same op, algorithm, ranks and size
    std::string baseline_source;           ///< where it came from, for the status text ("base.json, run c-3")
    double warn = 0.9;                     ///< WARNING below warn × baseline_busbw
    double crit = 0.75;                    ///< CRITICAL below crit × baseline_busbw
    /// What the ranks' counters are judged against (--max-symbol-errors-per-hour,
    /// --retransmit-warn/-crit: core/counter_verdicts.hpp, docs/counters.md).
    core::counter_thresholds counters;
    bool judge_counters = true;            ///< false with --ignore-counters: the figures only
};

/// The labels of a check's textfile series.
struct collective_check_labels {
    std::string op, algo, transport, memory;  ///< algo empty when the check failed before its spec was built
};

/// The labels of a check of `spec`'s first op.
collective_check_labels collective_check_labels_of(const core::collective_spec& spec);

/// The verdict of a collective check.
struct collective_verdict {
    core::check_state state = core::check_state::unknown;
    std::string what;     ///< "allreduce ring over 4 ranks (tcp, host)" or the op asked for
    std::string summary;  ///< the status text after the state
    std::string perfdata; ///< "busbw_gbyte=12.3;;10:;0;" (empty without a figure)
    collective_check_labels labels;
    std::optional<core::collective_point> point;  ///< the point judged (empty when UNKNOWN)
};

/// Where a point below its limits was slow, hosts named: "slowest link rank 2 (h2) -> rank 3
/// (h3) at 1.2 Gbit/s: likely cause rank 2 (h2), its sender (the slowest rank, rank 3 (h3),
/// waits for what it sends)" for a ring with timed links (the receiver of a slow link takes
/// longest, so the sender is named as the cause), else "slowest rank N (host)".
std::string slowest_text(const core::collective_result& run, const core::collective_point& p);

/// Judges the single point of a completed run against `limits` (at least one of min_busbw
/// and baseline_busbw, each > 0). A run that did not complete, or has no point, is UNKNOWN
/// with its error. Unless limits.judge_counters is false, each rank's counters over the
/// point (rank_counters) are judged too, as a path check judges an end's
/// (core::judge_link_counters): an error counter that moved makes the verdict WARNING, one
/// that means the link went down CRITICAL, even when busbw passes; the text names the rank,
/// its host, the interface and the counter ("rank 1 (n1:7470) eth0: 2 carrier_changes (...)",
/// with "an end of the slowest link" when it is), and each finding is perfdata
/// ("rank1_eth0_carrier_changes=2;;;0;"). Each rank's TCP retransmit share
/// (rank_tcp_counters: over a ring, its link to the right) is judged against
/// --retransmit-warn and --retransmit-crit the same way ("rank 1 (n1:7470) sending to rank 2
/// (n2:7470): TCP retransmits: 60 of 1000 segments retransmitted (6.00%, above 5%)").
collective_verdict judge_collective(const core::collective_result& run, const collective_limits& limits);

/// An UNKNOWN verdict: the check could not be made, for `why`.
collective_verdict unknown_collective(collective_check_labels labels, std::string why);

/// The busbw (GB/s) of the point of a collective result document (`meshperf collective
/// --format json`, or `show --format json`) with the op, algorithm, rank count, size and
/// transport of `spec` (one op, one size), and a description of it for the status text.
/// Throws core::spec_error naming what the document lacks (not a collective result, no such
/// point: the points it has are listed) or holds wrongly (a busbw not positive).
std::pair<double, std::string> collective_baseline(const nlohmann::json& doc, const std::string& file,
                                                   const core::collective_spec& spec);

/// A node_exporter textfile for one collective check (gauges, no sample timestamps):
/// - meshperf_collective_check_status{op, algo, transport, memory}: 0 OK .. 3 UNKNOWN
/// - meshperf_collective_check_busbw_bits_per_second{op, algo, transport, memory, ranks, size_bytes}
///   (bits, as meshperfd's meshperf_collective_busbw_bits_per_second)
/// - meshperf_collective_check_time_seconds{same}: the collective's time
/// - meshperf_collective_check_wrong_elements{same}: #wrong (the check always verifies)
/// - meshperf_collective_check_last_run_timestamp_seconds{op, algo, transport, memory}
/// The figure families have a sample only when the verdict judged a point.
std::string collective_check_textfile(const collective_verdict&, double unix_seconds);

/// "MESHPERF CRITICAL - allreduce ring over 4 ranks (tcp, host): ... | busbw_gbyte=...".
std::string nagios_line(const collective_verdict&);

/// The verdict as nagios (the line) or json ({state, exit_code, what, summary, line}), ending
/// in a newline.
std::string render_collective_check(const collective_verdict&, output_format format);

/// The spec of the check's run: o.sizes is the one --size, iterations and warm-up are kept
/// short, and every rank verifies (so that corruption is CRITICAL). Throws client_error
/// (exit_usage) as build_collective_spec does, and for more than one op or size.
core::collective_spec collective_check_spec(collective_options o, const option_given& given);

/// `check --collective` as the command line gave it.
struct collective_check_options {
    collective_options collective;   ///< --collective OP, --hosts, --size, --algo, --memory, --transport
    bool hosts_given = false;        ///< --hosts was on the command line
    bool algo_given = false;         ///< --algo was on the command line
    std::string peer;                ///< a peer given as well (refused: --hosts names the daemons)
    std::optional<double> min_busbw; ///< --min-busbw, when given
    std::string baseline;            ///< --baseline FILE: a collective result
    double warn = 0.9, crit = 0.75;  ///< --warn, --crit: fractions of the baseline's busbw
    std::string prom_file;           ///< --prom-file: also write a node_exporter textfile
    output_format format = output_format::nagios;
    double timeout_s = 120;          ///< --timeout: UNKNOWN after this many seconds
    core::counter_thresholds counters;  ///< --max-symbol-errors-per-hour, --retransmit-warn/-crit
    bool ignore_counters = false;       ///< --ignore-counters: judge busbw and wrong elements only
};

/// check --collective: checks the options, runs one short collective (collective_check_spec)
/// through its coordinator with the credentials of `token_file` and `tls`, judges it
/// against --min-busbw and/or --baseline, prints the verdict once (and writes --prom-file),
/// and returns its exit code. Bad options, a failed run and a run that outlasts --timeout are
/// UNKNOWN verdicts (3), as is a --prom-file that could not be written after an OK.
int run_collective_check(const collective_check_options& o, const std::string& token_file, const transport::tls_files& tls);

}  // namespace meshperf::client
