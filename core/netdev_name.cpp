#include "core/netdev_name.hpp"

#include <algorithm>

namespace meshperf::core {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

bool dot_or_dotdot(std::string_view n) { return n == "." || n == ".."; }

}  // namespace

bool valid_netdev_name(std::string_view name) {
    if (name.empty() || dot_or_dotdot(name)) return false;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < name.size(); ++i, ++bytes) {
        if (name.substr(i, replacement.size()) == replacement) {
            i += replacement.size() - 1;
            continue;
        }
        const char c = name[i];
        if (c == '/' || c == ':' || c == '\0' || c == ' ' || (c >= '\t' && c <= '\r')) return false;
    }
    return bytes <= max_netdev_name_bytes;
}

bool valid_sysfs_file_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 && !dot_or_dotdot(name) &&
           std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || c == '\0'; });
}

}  // namespace meshperf::core
