#pragma once
/// Message sizes: parsing "4K", "1..4M", "64,4K,1M" and formatting bytes in IEC units.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// Largest message size meshperf accepts (1 GiB): one buffer of this size per stream.
inline constexpr std::uint64_t max_message_size = 1ull << 30;

/// Parses one size: a positive integer with an optional IEC suffix K, M, G (also KiB, MiB,
/// GiB, case-insensitive; 4K = 4096) or B. Throws spec_error saying what is wrong.
std::uint64_t parse_size(std::string_view text);

/// Parses a size list: comma-separated items, each a size or a range "LO..HI" expanded to
/// LO and every power of two strictly between LO and HI, then HI. Sizes must be in
/// 1..max_message_size; ranges need LO <= HI. The result is sorted and free of duplicates.
/// Throws spec_error naming the offending item.
std::vector<std::uint64_t> parse_size_list(std::string_view text);

/// Formats bytes in IEC units with no more digits than needed: 1 -> "1 B", 4096 -> "4 KiB",
/// 1536 -> "1.5 KiB".
std::string format_size(std::uint64_t bytes);

/// Formats bytes compactly for tables and CLI arguments: 4096 -> "4K", 1048576 -> "1M", 100 -> "100".
std::string format_size_short(std::uint64_t bytes);

}  // namespace meshperf::core
