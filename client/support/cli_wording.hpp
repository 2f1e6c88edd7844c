#pragma once
/// Rewordings of messages that come from layers shared with the API or the daemon, so that
/// the CLI says what a CLI user can do: option names instead of JSON fields, commands instead
/// of API calls, the parse position instead of the JSON library's exception tag. Pure.
#include <cstddef>
#include <string>
#include <string_view>

namespace meshperf::client {

/// nlohmann::json's exception text without its "[json.exception.parse_error.101] " tag:
/// "parse error at line 1, column 2: syntax error while parsing value - invalid literal; ...".
std::string json_error_text(std::string_view what);

/// `message` with the API's "field 'NAME': " in front replaced by "OPTION: " (core's spec
/// errors name JSON fields; `meshperf local --copy h2x` should name --copy).
std::string with_option_name(std::string message, std::string_view field, std::string_view option);

/// The daemon's "(list runs with GET /v1/runs)" advice as the command that does it:
/// "(list them with: meshperf runs HOST)".
std::string with_runs_command(std::string message, std::string_view host);

/// A GPU status message for `meshperf local`, which has no --memory option: its advice to
/// "measure with --memory host" says instead that local measures GPU copies only.
std::string for_local_command(std::string gpu_message);

/// `text` cut to at most `max` characters (UTF-8 code points), ending in "…" when cut.
std::string shortened(const std::string& text, std::size_t max);

}  // namespace meshperf::client
