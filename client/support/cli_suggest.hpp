#pragma once
/// "Did you mean": the nearest command or long option to a mistyped one, so that
/// `meshperf sweeep` answers "unknown command 'sweeep': did you mean 'sweep'?".
#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::client {

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` when it is near enough to be a typo of it (at most one
/// edit for words up to 4 letters, two up to 8, three beyond, or `word` a prefix of exactly
/// one candidate); "" otherwise. Ties go to the first candidate.
std::string nearest_name(std::string_view word, std::span<const std::string> candidates);

/// For main(), after a parse error: when `args` (argv without the program name) name a
/// command or a long option that `app` does not know, the message to print instead of
/// CLI11's: "unknown command 'sweeep': did you mean 'sweep'?", "unknown option '--duraton'
/// for 'meshperf sweep': did you mean '--duration'?", or the list of commands when none is
/// near. "" when every command and long option is known.
std::string explain_unknown_name(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace meshperf::client
