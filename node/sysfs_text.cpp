#include "node/sysfs_text.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>

namespace meshperf::node {

std::optional<std::string> read_line(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    std::string line;
    if (!std::getline(in, line) && line.empty()) return std::nullopt;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) return std::string();
    const auto last = line.find_last_not_of(" \t\r");
    return line.substr(first, last - first + 1);
}

std::optional<long long> read_integer(const std::filesystem::path& file) {
    const auto text = read_line(file);
    if (!text || text->empty()) return std::nullopt;
    long long v = 0;
    const auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || p != text->data() + text->size()) return std::nullopt;
    return v;
}

std::optional<unsigned long> read_hex(const std::filesystem::path& file) {
    auto text = read_line(file);
    if (!text) return std::nullopt;
    std::string_view s(*text);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    if (s.empty()) return std::nullopt;
    unsigned long v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<double> leading_number(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    double v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p == text.data()) return std::nullopt;
    return v;
}

std::string link_target_name(const std::filesystem::path& link) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(link, ec);
    if (ec) return {};
    return target.filename().string();
}

}  // namespace meshperf::node
