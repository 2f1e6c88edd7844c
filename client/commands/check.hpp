#pragma once
/// `meshperf check`: a short measurement judged against absolute limits or a baseline, as a
/// Nagios plugin (one line with perfdata; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
/// The pieces without I/O are here so that they can be tested alone.
#include "client/support/output_format.hpp"
#include "core/check.hpp"

#include <CLI/CLI.hpp>
#include <string>

namespace meshperf::client {

/// What the check prints for a result: the Nagios plugin output (core::nagios_output: one
/// line, or a short status line with the details on the lines after it), or the JSON
/// document, ending in a newline. `format` is nagios or json (the formats check offers);
/// another throws std::logic_error.
std::string render_check(const core::check_result& r, output_format format);

/// For main(): when a command-line parse error belongs to a health check (`check`, or
/// `inspect`: "MESHPERF INSPECT UNKNOWN"), prints the CLI's message
/// on stderr and an UNKNOWN line on stdout, and returns 3 (0 for --help); otherwise
/// returns -1 and main() handles the error as for any command. Monitoring systems read
/// 3 as "the check could not run", where the CLI's usual 2 would read as CRITICAL.
/// `hint`, when not empty, replaces CLI11's message (a "did you mean" from cli_suggest).
int check_parse_failure(CLI::App& app, const CLI::ParseError& e, const std::string& hint = {});

}  // namespace meshperf::client
