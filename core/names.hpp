#pragma once
/// How names typed by users are compared (dtypes, collectives, algorithms): case and the
/// separators '-' and '_' do not matter, so "bfloat16", "BFloat16" and "b_float16" agree.
#include <string>
#include <string_view>

namespace meshperf::core {

/// `s` in lower case with every '-' and '_' removed.
inline std::string normalized_name(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '-' && c != '_') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

}  // namespace meshperf::core
