#pragma once
/// Health-check verdicts: measured figures against absolute limits or a stored baseline,
/// as a Nagios-style state, one line of plugin output with performance data, and JSON.
/// Pure functions, no I/O.
///
/// States and exit codes follow the Nagios plugin guidelines: OK 0, WARNING 1, CRITICAL 2,
/// UNKNOWN 3. The state of several figures is the worst one, ranked
/// CRITICAL > WARNING > UNKNOWN > OK (as monitoring-plugins' max_state does).
///
/// Rules, per figure (bandwidth in Gbit/s, latency one-way in us):
/// - Absolute limits: bandwidth < min_gbit → CRITICAL; latency > max_lat_us → CRITICAL.
/// - Baseline: performance relative to the baseline of the same test and size, where
///   performance is bandwidth / baseline bandwidth, or baseline latency / latency; below
///   `crit` → CRITICAL, else below `warn` → WARNING. With warn 0.9 and crit 0.75:
///   bandwidth under 90% of baseline warns, under 75% is critical; latency over
///   baseline / 0.9 (+11%) warns, over baseline / 0.75 (+33%) is critical.
/// - Comparisons are strict: a figure exactly at a threshold is OK.
/// - In baseline mode a figure without a baseline is UNKNOWN. A figure that is not a
///   positive finite number is UNKNOWN. Both kinds of limit may be given; the worst wins.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Nagios plugin states; the value is the exit code.
enum class check_state : int { ok = 0, warning = 1, critical = 2, unknown = 3 };

/// "OK", "WARNING", "CRITICAL", "UNKNOWN".
std::string_view to_string(check_state);

/// The process exit code for a state (0..3).
int exit_code(check_state);

/// The more severe of two states: CRITICAL > WARNING > UNKNOWN > OK.
check_state worst(check_state, check_state);

/// What a figure measures.
enum class figure_kind { bandwidth, latency };

/// "bandwidth" or "latency".
std::string_view to_string(figure_kind);

/// One measured (or baseline) figure: bandwidth in Gbit/s (10^9 bit/s), or one-way
/// latency in microseconds, at a message size.
struct check_figure {
    figure_kind kind = figure_kind::bandwidth;
    std::uint64_t size_bytes = 0;
    double value = 0;
    /// The rail the figure is of (core/rail_check.hpp); empty: the path (all rails together).
    std::string rail;
};

/// Limits of a check. At least one of min_gbit, max_lat_us or baseline must be given.
struct check_limits {
    std::optional<double> min_gbit;     ///< --min-gbit: bandwidth below is CRITICAL
    std::optional<double> max_lat_us;   ///< --max-lat-us: latency above is CRITICAL
    std::vector<check_figure> baseline; ///< baseline figures; non-empty means baseline mode
    double warn = 0.9;                  ///< --warn: fraction of baseline performance, in (0, 1]
    double crit = 0.75;                 ///< --crit: fraction of baseline performance, in (0, warn]
};

/// Throws spec_error, saying which option is wrong and what it must be: no limit at all,
/// a limit that is not a positive finite number, warn/crit outside 0 < crit <= warn <= 1,
/// a baseline figure that is not positive, or two baseline figures for the same test and size.
void validate(const check_limits&);

/// Throws spec_error unless 0 < crit <= warn <= 1 (--warn and --crit, fractions of baseline
/// performance), saying so with an example. Part of validate; also the collective check's.
void validate_fractions(double warn, double crit);

/// What was checked: the peer as given, the transport, and the initiating daemon when it
/// is not the local one.
struct check_target {
    std::string peer;       ///< "node2:7470"
    std::string transport;  ///< "tcp", "rdma", ...
    std::string initiator;  ///< empty: the local daemon
};

/// "tcp to node2:7470", or "tcp from node1:7470 to node2:7470" with an initiator.
std::string describe(const check_target&);

/// The verdict on one figure.
struct figure_verdict {
    check_figure figure;
    check_state state = check_state::ok;
    std::string reason;              ///< empty when OK; otherwise the rules that fired, "; "-joined
    std::optional<double> warn_at;   ///< effective warning threshold (bandwidth: below; latency: above)
    std::optional<double> crit_at;   ///< effective critical threshold, the strictest of the rules
};

/// A verdict on a counter recorded with the figures (core/counter_verdicts.hpp): a link
/// that reads fast but went down or retransmitted heavily during the check is not healthy.
struct counter_verdict {
    check_state state = check_state::warning;  ///< warning or critical
    std::string text;    ///< what moved, where and at which point: "peer veth1: 2 carrier_changes (...) at 1 MiB bandwidth"
    std::string label;   ///< perfdata label: "retransmit_share", "peer_veth1_carrier_changes"
    double value = 0;    ///< the count (or share) behind it
};

/// A check's outcome.
struct check_result {
    check_target target;
    check_state state = check_state::unknown;
    std::vector<figure_verdict> figures;
    std::vector<counter_verdict> counters;  ///< counters that were not OK, worst first
    std::string message;  ///< why the check could not be made (UNKNOWN without figures); else empty
};

/// Judges the measured figures. Throws spec_error when the limits are invalid (validate()):
/// the caller reports that as unknown_result(). No figures at all gives UNKNOWN.
check_result evaluate_check(const check_target&, std::span<const check_figure> measured,
                            const check_limits&);

/// Adds the counter verdicts to a result that has figures: its state becomes the worst of
/// both. A result without figures (UNKNOWN, the check not made) is left as it is.
void add_counter_verdicts(check_result&, std::vector<counter_verdict>);

/// An UNKNOWN result for a check that could not be made: peer unreachable, daemon down,
/// bad options. `message` says why.
check_result unknown_result(const check_target&, std::string message);

/// Formats one perfdata item `label=value;warn;crit;min;max` with empty fields kept. The
/// label is quoted with single quotes when it holds a space; a label with '=' or a single
/// quote throws spec_error. A non-finite value is written "U" (undetermined).
std::string perfdata_item(std::string_view label, double value, std::string_view warn = {},
                          std::string_view crit = {}, std::string_view min = {}, std::string_view max = {});

/// The first line of the plugin output must stay short: Nagios keeps the first 4 KB of what
/// a plugin prints, and shows the first line as the status.
inline constexpr std::size_t nagios_first_line_max = 300;

/// The plugin output, no final newline. One line when it is shorter than
/// nagios_first_line_max characters:
/// "MESHPERF OK - tcp to node2:7470: 9.41 Gbit/s at 1 MiB, 23.1 us at 8 B | bw_gbit=9.41;;;0; lat_us=23.1;;;0;"
/// Figures that are not OK carry their state and reason in parentheses, and each counter
/// verdict follows the figures ("..., peer veth1: 2 carrier_changes ... (WARNING)").
/// Otherwise (many
/// figures, long reasons) the Nagios long-output form: a first line shorter than
/// nagios_first_line_max with the state, the worst figure (the first at the overall state;
/// its reason left out when it does not fit) and a count of the other figures by state,
/// then " | " and that figure's perfdata; then one line per figure ("CRITICAL: 31.0 us at
/// 8 B: above baseline ..."); the last of them ends in " | " and the next perfdata item, and
/// each further item follows on a line of its own (plugin guidelines, "Plugin Output").
/// Perfdata labels carry the unit (Gbit/s and us are not Nagios UOMs, so no UOM is
/// written): `bw_gbit`, `lat_us`, suffixed with the size ("bw_gbit_1M") when a kind is
/// measured at several sizes; a rail's figure is labelled with its rail ("bw_gbit_ens2"). warn/crit are Nagios ranges: "X:" (alert below X) for
/// bandwidth, "X" (alert above X) for latency; min is 0; max is empty. '|' and line breaks
/// in free text are replaced.
std::string nagios_output(const check_result&);

/// The first line of nagios_output() (all of it when it is one line).
std::string nagios_line(const check_result&);

/// JSON: {state, exit_code, target{peer, transport, initiator}, message, figures[{test,
/// size_bytes, gbit_per_s or lat_us (null when not finite), state, reason, warn_at,
/// crit_at}], counters[{state, text, label, value}], line (the first line of the plugin output), output (all of it)}.
nlohmann::json to_json(const check_result&);

}  // namespace meshperf::core
