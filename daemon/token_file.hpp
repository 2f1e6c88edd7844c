#pragma once
/// Reading the cluster token file.
#include <string>

namespace meshperf::daemon {

/// Reads the bearer token from `path`: the first line, trimmed. Refuses (core::spec_error
/// with the fix) a file that is missing, empty, or readable by group or others.
std::string read_token_file(const std::string& path);

}  // namespace meshperf::daemon
