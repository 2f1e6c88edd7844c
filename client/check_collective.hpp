#pragma once
/// `meshperf check --collective OP --min-busbw X --hosts ...`: a short collective judged as a
/// Nagios plugin (client/check_command.hpp's scheme: exit 0 OK, 2 CRITICAL, 3 UNKNOWN; one
/// status line with perfdata). CRITICAL when busbw at the size is below --min-busbw (GB/s,
/// nccl-tests' unit) or when a rank counted wrong elements; UNKNOWN when the check could not
/// be made (bad options, a host unreachable, the run failed). Pure verdicts here; the command
/// is in check_command.cpp.
#include "client/collective_spec_options.hpp"
#include "client/output_format.hpp"
#include "core/check.hpp"
#include "core/collective_result.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::client {

/// Size of the check's collective when --size is not given.
inline constexpr const char* default_collective_check_size = "16M";

/// The verdict of a collective check.
struct collective_verdict {
    core::check_state state = core::check_state::unknown;
    std::string what;     ///< "allreduce ring over 4 ranks (tcp, host)" or the op asked for
    std::string summary;  ///< the status text after the state
    std::string perfdata; ///< "busbw_gbyte=12.3;;10:;0;" (empty without a figure)
};

/// Judges the single point of a completed run against `min_busbw_gbyte` (> 0). A run that did
/// not complete, or has no point, is UNKNOWN with its error.
collective_verdict judge_collective(const core::collective_result& run, double min_busbw_gbyte);

/// An UNKNOWN verdict: the check could not be made, for `why`.
collective_verdict unknown_collective(std::string what, std::string why);

/// "MESHPERF CRITICAL - allreduce ring over 4 ranks (tcp, host): ... | busbw_gbyte=...".
std::string nagios_line(const collective_verdict&);

/// The verdict as nagios (the line) or json ({state, exit_code, what, summary, line}), ending
/// in a newline.
std::string render_collective_check(const collective_verdict&, output_format format);

/// The spec of the check's run: o.sizes is the one --size, iterations and warm-up are kept
/// short, and every rank verifies (so that corruption is CRITICAL). Throws client_error
/// (exit_usage) as build_collective_spec does, and for more than one op or size.
core::collective_spec collective_check_spec(collective_options o, const option_given& given);

}  // namespace meshperf::client
