#pragma once
/// `--hosts` of `matrix` and `collective`: the daemons as written, from a file with one
/// HOST[:PORT] per line (blank lines and `#` comments skipped, several words on a line
/// allowed) or from a comma list. Reads only: what the hosts must be (how many, each once)
/// is for the command to check (core::validate for a collective, read_host_list for a
/// matrix), so that each refusal says what that command needs.
#include <string>
#include <vector>

namespace meshperf::client {

/// The hosts of `spec` as written: the words of the file `spec` names when it is an existing
/// file, else the non-empty items of the comma list, trimmed. Throws client_error
/// (exit_usage) for a file that cannot be read, and for a spec without a comma that names
/// no file (a missing host file, or one host where a list is needed: both need fixing).
std::vector<std::string> read_host_words(const std::string& spec);

/// The text of a host file, as read_host_words reads it: the words of every line, up to a
/// `#` on that line.
std::vector<std::string> parse_host_file_text(const std::string& text);

}  // namespace meshperf::client
