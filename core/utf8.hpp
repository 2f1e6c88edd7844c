#pragma once
/// UTF-8 validity for text that comes from outside (a peer's reply, a request's path, query
/// or headers) before it enters a JSON document: nlohmann::json throws type_error.316 when
/// it dumps a string that is not valid UTF-8, and the daemon dumps every run it stores.
#include <string>
#include <string_view>

namespace meshperf::core {

/// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, no
/// code point above U+10FFFF). NUL bytes are valid UTF-8; callers that refuse them check
/// for them separately.
bool is_valid_utf8(std::string_view text);

/// `text` with every byte that does not start or continue a well-formed sequence replaced
/// by U+FFFD (one replacement per bad byte), so the result is valid UTF-8 and keeps every
/// valid character of the input in place. Returns the input unchanged when it is valid.
std::string to_valid_utf8(std::string_view text);

}  // namespace meshperf::core
