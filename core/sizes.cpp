#include "core/sizes.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>

namespace meshperf::core {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
    const auto t = trim(text);
    if (t.empty()) throw spec_error("empty size: give a number of bytes such as 64, 4K or 1M");
    std::uint64_t value = 0;
    const auto* begin = t.data();
    const auto* end = t.data() + t.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ptr == begin) throw spec_error(fmt::format("size '{}' does not start with a number (use e.g. 64, 4K, 1M)", t));
    if (ec == std::errc::result_out_of_range) throw spec_error(fmt::format("size '{}' is too large", t));
    const std::string suffix = lower(trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr))));
    std::uint64_t mult = 1;
    if (suffix.empty() || suffix == "b") mult = 1;
    else if (suffix == "k" || suffix == "kib" || suffix == "ki") mult = 1ull << 10;
    else if (suffix == "m" || suffix == "mib" || suffix == "mi") mult = 1ull << 20;
    else if (suffix == "g" || suffix == "gib" || suffix == "gi") mult = 1ull << 30;
    else throw spec_error(fmt::format("size '{}' has an unknown unit '{}' (use B, K, M or G; 4K = 4096 bytes)", t, suffix));
    if (value == 0) throw spec_error(fmt::format("size '{}' is zero: a message must carry at least 1 byte", t));
    if (value > max_message_size / mult)
        throw spec_error(fmt::format("size '{}' is larger than the maximum message size of {}", t, format_size(max_message_size)));
    return value * mult;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
    std::vector<std::uint64_t> sizes;
    if (trim(text).empty()) throw spec_error("empty size list: give sizes such as 1..4M or 64,4K,1M");
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto comma = text.find(',', pos);
        const auto item = trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        if (item.empty()) throw spec_error(fmt::format("size list '{}' has an empty item", text));
        const auto dots = item.find("..");
        if (dots == std::string_view::npos) {
            sizes.push_back(parse_size(item));
        } else {
            std::uint64_t lo = 0, hi = 0;
            try {
                lo = parse_size(item.substr(0, dots));
                hi = parse_size(item.substr(dots + 2));
            } catch (const spec_error& e) {
                throw spec_error(fmt::format("size range '{}': {}", item, e.what()));
            }
            if (lo > hi)
                throw spec_error(fmt::format("size range '{}' runs backwards: the first size must not exceed the second", item));
            sizes.push_back(lo);
            for (std::uint64_t p = 1; p < hi; p <<= 1)
                if (p > lo) sizes.push_back(p);
            sizes.push_back(hi);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) { v /= 1024.0; ++u; }
    if (u == 0) return fmt::format("{} B", bytes);
    if (v == static_cast<double>(static_cast<std::uint64_t>(v))) return fmt::format("{} {}", static_cast<std::uint64_t>(v), units[u]);
    // About three significant digits, never scientific notation (1023.9 KiB -> "1024 KiB").
    std::string text = fmt::format("{:.{}f}", v, v >= 100 ? 0 : v >= 10 ? 1 : 2);
    if (text.find('.') != std::string::npos) {
        while (text.back() == '0') text.pop_back();
        if (text.back() == '.') text.pop_back();
    }
    return fmt::format("{} {}", text, units[u]);
}

std::string format_size_short(std::uint64_t bytes) {
    static constexpr const char* units[] = {"", "K", "M", "G"};
    int u = 0;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) { bytes /= 1024; ++u; }
    return fmt::format("{}{}", bytes, units[u]);
}

}  // namespace meshperf::core
