#include "core/toml_nesting.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

namespace meshperf::core {
namespace {

/// Skips the string that opens at text[i] (a quote), counting its newlines; returns the
/// index of its last character (its closing quote, or where it stops unterminated: the parser
/// reports that).
std::size_t skip_string(std::string_view text, std::size_t i, std::size_t& line) {
    const char q = text[i];
    const bool escapes = q == '"';
    const bool multi = text.substr(i, 3) == std::string(3, q);
    std::size_t j = i + (multi ? 3 : 1);
    for (; j < text.size(); ++j) {
        const char c = text[j];
        if (c == '\n') {
            ++line;
            if (!multi) return j - 1;  // a one-line string ends at its line
        } else if (escapes && c == '\\') {
            if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
            ++j;
        } else if (c == q && (!multi || text.substr(j, 3) == std::string(3, q))) {
            if (!multi) return j;
            j += 2;
            while (j + 1 < text.size() && text[j + 1] == q) ++j;  // up to two quotes end the content
            return j;
        }
    }
    return text.size() - 1;
}

}  // namespace

void check_toml_nesting(std::string_view text, const std::string& origin, std::size_t max_depth) {
    std::size_t open = 0, dots = 0, line = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        switch (const char c = text[i]) {
        case '\n': ++line; dots = 0; break;
        case '#':
            while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
            break;
        case '"':
        case '\'': i = skip_string(text, i, line); break;
        case '[':
        case '{':
            if (++open > max_depth)
                throw spec_error(fmt::format("{}: line {}: arrays and inline tables nested deeper than {}: not a meshperf "
                                             "file (meshperf's own nest 2 deep); check what the file holds",
                                             origin, line, max_depth));
            dots = 0;
            break;
        case ']':
        case '}':
            if (open > 0) --open;
            dots = 0;
            break;
        case '=':
        case ',': dots = 0; break;
        case '.':
            if (++dots >= max_depth)
                throw spec_error(fmt::format("{}: line {}: a dotted key with more than {} parts: not a meshperf file "
                                             "(meshperf's keys have at most 2); check what the file holds",
                                             origin, line, max_depth));
            break;
        default: (void)c; break;
        }
    }
}

}  // namespace meshperf::core
