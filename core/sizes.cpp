#include "core/sizes.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
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

constexpr std::string_view multiplier_letters = "kmgtp";  // 2^10, 2^20, ... 2^50
constexpr const char* prefixes[] = {"kilo", "mega", "giga", "tera", "peta"};

/// "1G (= 1073741824 bytes)", or just "1G" when the product does not fit.
std::string iec_suggestion(std::string_view number, char letter, std::uint64_t mult, double value) {
    const double bytes = value * static_cast<double>(mult);
    const auto unit = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    if (!(bytes < 1.8e19) || bytes != std::floor(bytes)) return fmt::format("{}{}", number, unit);
    return fmt::format("{}{} (or {}{}iB) for {} bytes", number, unit, number, unit, static_cast<std::uint64_t>(bytes));
}

std::uint64_t parse_bytes(std::string_view text, std::uint64_t max, std::string_view limit_text) {
    const auto t = trim(text);
    if (t.empty()) throw spec_error("empty size: give a number of bytes such as 64, 4K or 1M");
    const auto* begin = t.data();
    const auto* end = t.data() + t.size();
    std::uint64_t whole = 0;
    auto [ptr, ec] = std::from_chars(begin, end, whole);
    if (ptr == begin) throw spec_error(fmt::format("size '{}' does not start with a number (use e.g. 64, 4K, 1M)", t));
    if (ec == std::errc::result_out_of_range) throw spec_error(fmt::format("size '{}' is too large", t));
    // A decimal ("1.5K", "1e9") is read again as a double; it must come to whole bytes.
    double value = static_cast<double>(whole);
    bool decimal = false;
    if (ptr != end && (*ptr == '.' || *ptr == 'e' || *ptr == 'E')) {
        double d = 0;
        auto [dptr, dec] = std::from_chars(begin, end, d);
        if (dec == std::errc() && dptr > ptr) {
            value = d;
            ptr = dptr;
            decimal = true;
        }
    }
    const auto number = std::string_view(begin, static_cast<std::size_t>(ptr - begin));
    const auto unit = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
    std::uint64_t mult = 1;
    if (!unit.empty() && !(unit.size() == 1 && (unit[0] == 'B' || unit[0] == 'b'))) {
        const auto letter = static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0])));
        const auto at = multiplier_letters.find(letter);
        if (at == std::string_view::npos)
            throw spec_error(fmt::format("size '{}' has an unknown unit '{}' (use B, K, M, G, T or P; 4K = 4096 bytes)", t,
                                         lower(unit)));
        mult = std::uint64_t{1} << (10 * (at + 1));
        const auto rest = unit.substr(1);
        if (rest == "B")
            throw spec_error(fmt::format("size '{}' is ambiguous: {} means 10^{} bytes to some and 2^{} to others; write {}, "
                                         "or the number of bytes",
                                         t, unit, 3 * (at + 1), 10 * (at + 1), iec_suggestion(number, letter, mult, value)));
        if (rest == "b")
            throw spec_error(fmt::format("size '{}' reads as {}bits (b = bit), but sizes are in bytes: write {}", t,
                                         prefixes[at], iec_suggestion(number, letter, mult, value)));
        if (!rest.empty() && lower(rest) != "i" && lower(rest) != "ib")
            throw spec_error(fmt::format("size '{}' has an unknown unit '{}' (use B, K, M, G, T or P; 4K = 4096 bytes)", t,
                                         lower(unit)));
    }
    if (value == 0) throw spec_error(fmt::format("size '{}' is zero: give at least 1 byte", t));
    if (decimal) {
        const double bytes = value * static_cast<double>(mult);
        // 0x1p64: (double)UINT64_MAX rounds up to 2^64, which no uint64_t holds.
        if (!std::isfinite(bytes) || bytes > static_cast<double>(max) || bytes >= 0x1p64)
            throw spec_error(fmt::format("size '{}' is larger than {}", t, limit_text));
        if (bytes != std::floor(bytes) || bytes < 1)
            throw spec_error(fmt::format("size '{}' is {} bytes, not a whole number: give whole bytes (e.g. {})", t, bytes,
                                         static_cast<std::uint64_t>(std::max(1.0, std::round(bytes)))));
        return static_cast<std::uint64_t>(bytes);
    }
    if (whole > max / mult) throw spec_error(fmt::format("size '{}' is larger than {}", t, limit_text));
    return whole * mult;
}

}  // namespace

std::uint64_t parse_byte_count(std::string_view text, std::uint64_t max) {
    return parse_bytes(text, max, fmt::format("the maximum of {}", format_size(max)));
}

std::uint64_t parse_size(std::string_view text) {
    static const std::string limit = fmt::format("the maximum message size of {}", format_size(max_message_size));
    return parse_bytes(text, max_message_size, limit);
}

size_list make_size_list(std::vector<std::uint64_t> as_written) {
    size_list out;
    out.sizes = as_written;
    std::sort(out.sizes.begin(), out.sizes.end());
    out.sizes.erase(std::unique(out.sizes.begin(), out.sizes.end()), out.sizes.end());
    out.as_written = std::move(as_written);
    return out;
}

size_list parse_size_list_as_written(std::string_view text) {
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
            if (hi != lo) sizes.push_back(hi);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return make_size_list(std::move(sizes));
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) { return parse_size_list_as_written(text).sizes; }

std::string size_order_change(const size_list& l) {
    const bool repeats = l.as_written.size() != l.sizes.size();
    const bool unordered = !std::is_sorted(l.as_written.begin(), l.as_written.end());
    if (unordered && repeats) return "in ascending order without repeats";
    if (unordered) return "in ascending order";
    if (repeats) return "without repeats";
    return {};
}

std::string format_size_list(const std::vector<std::uint64_t>& sizes) {
    std::string out;
    for (auto s : sizes) out += (out.empty() ? "" : ",") + format_size_short(s);
    return out;
}

std::string size_order_note(std::string_view option, std::string_view text, const size_list& l) {
    const auto change = size_order_change(l);
    if (change.empty()) return {};
    return fmt::format("note: {} {} measured {}: {}", option, trim(text), change, format_size_list(l.sizes));
}

void require_ascending(std::string_view field, const size_list& l) {
    const auto change = size_order_change(l);
    if (change.empty()) return;
    // A size out of range is the first thing to fix: the spec's validation names it.
    for (auto s : l.sizes)
        if (s == 0 || s > max_message_size) return;
    std::string array;
    for (auto s : l.sizes) array += (array.empty() ? "" : ", ") + std::to_string(s);
    throw spec_error(fmt::format("field '{}' must list sizes in ascending order without repeats, the order they are measured "
                                 "in: send [{}] or \"{}\"",
                                 field, array, format_size_list(l.sizes)));
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
