#pragma once
/// Message sizes and byte amounts: parsing "4K", "1.5G", "1..4M", "64,4K,1M" and formatting
/// bytes in IEC units. The one parser of sizes for the CLI and the API (docs/operations.md,
/// "Sizes").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Largest message size meshperf accepts (1 GiB): one buffer of this size per stream.
inline constexpr std::uint64_t max_message_size = 1ull << 30;

/// Parses a byte amount: a number (an integer, or a decimal that comes to a whole number of
/// bytes: "1.5K" = 1536) with an optional unit, K, M, G, T, P = 2^10, 2^20, ... bytes (also
/// written Ki, KiB, ...; letters in any case; 4K = 4096), or B for bytes. Units that are
/// ambiguous are refused with what to write instead: KB, MB, GB, ... (10^n or 2^n bytes?)
/// and Kb, Gb, ... (bits?). Throws spec_error for those, for 0, and above `max`.
std::uint64_t parse_byte_count(std::string_view text, std::uint64_t max);

/// parse_byte_count() of one message size, 1 B .. max_message_size.
std::uint64_t parse_size(std::string_view text);

/// A size list as written and as measured.
struct size_list {
    std::vector<std::uint64_t> sizes;       ///< ascending, without repeats: what is measured
    std::vector<std::uint64_t> as_written;  ///< every item and range expanded in the order written, repeats kept
    /// True when sorting or dropping repeats changed the list (the user should be told).
    bool reordered() const { return sizes != as_written; }
};

/// The size_list of sizes given as numbers (a JSON array): sorted and deduplicated copy.
size_list make_size_list(std::vector<std::uint64_t> as_written);

/// Parses a size list: comma-separated items, each a size (parse_size) or a range "LO..HI"
/// expanded to LO and every power of two strictly between LO and HI, then HI. Ranges need
/// LO <= HI. Throws spec_error naming the offending item.
size_list parse_size_list_as_written(std::string_view text);

/// parse_size_list_as_written(text).sizes: sorted and free of duplicates.
std::vector<std::uint64_t> parse_size_list(std::string_view text);

/// What sorting did to a list: "" when nothing changed, else "in ascending order", "without
/// repeats" or "in ascending order without repeats".
std::string size_order_change(const size_list&);

/// The sizes as a list parse_size_list reads back: "1,64,4K".
std::string format_size_list(const std::vector<std::uint64_t>& sizes);

/// For the CLI: "note: --sizes 64,1,64 measured in ascending order without repeats: 1,64",
/// or "" when the list was already ascending without repeats.
std::string size_order_note(std::string_view option, std::string_view text, const size_list&);

/// For the API, which measures what it is sent or refuses it: throws spec_error naming
/// `field` and the list to send instead unless the list is ascending without repeats.
/// Silent when a size is out of range (0, above max_message_size): validation says that.
void require_ascending(std::string_view field, const size_list&);

/// Formats bytes in IEC units with no more digits than needed: 1 -> "1 B", 4096 -> "4 KiB",
/// 1536 -> "1.5 KiB".
std::string format_size(std::uint64_t bytes);

/// Formats bytes compactly for tables and CLI arguments: 4096 -> "4K", 1048576 -> "1M", 100 -> "100".
std::string format_size_short(std::uint64_t bytes);

}  // namespace meshperf::core
