#pragma once
/// A bound on how deep a TOML text nests, checked before cpptoml parses it: cpptoml parses
/// (and frees) arrays, inline tables and dotted keys recursively, so 30,000 nested inline
/// tables or 100,000 nested arrays overflowed the stack of both binaries.
#include <cstddef>
#include <string>
#include <string_view>

namespace meshperf::core {

/// The deepest nesting a meshperf TOML file may use: open arrays and inline tables at once,
/// or the parts of one dotted key or table header. meshperf's own files use 2.
inline constexpr std::size_t max_toml_nesting = 64;

/// Throws spec_error ("ORIGIN: line N: arrays and inline tables nested deeper than 64 ...")
/// when `text` nests deeper than `max_depth`. Strings and comments are skipped as TOML reads
/// them; everything else is left to the parser.
void check_toml_nesting(std::string_view text, const std::string& origin, std::size_t max_depth = max_toml_nesting);

}  // namespace meshperf::core
