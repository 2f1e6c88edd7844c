#pragma once
/// Reading sysfs attribute files: one short line of text, or a number. Every function
/// returns nullopt for a file that is absent, unreadable or does not hold what is asked,
/// so a caller can report it as unknown instead of guessing.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace meshperf::node {

/// The first line of `file`, without surrounding white space; nullopt when it cannot be read.
std::optional<std::string> read_line(const std::filesystem::path& file);

/// A decimal integer file ("16", "-1", "9000"); nullopt when unreadable or not a number.
std::optional<long long> read_integer(const std::filesystem::path& file);

/// A hexadecimal file as PCI attributes hold them ("0x10de", "0x030200"); nullopt otherwise.
std::optional<unsigned long> read_hex(const std::filesystem::path& file);

/// The leading number of a text ("16.0 GT/s PCIe" -> 16, "400 Gb/sec (4X NDR)" -> 400);
/// nullopt when it does not start with one.
std::optional<double> leading_number(std::string_view text);

/// The name a symlink points to, last component only (SYSFS/.../driver -> "mlx5_core");
/// empty when it is not a link.
std::string link_target_name(const std::filesystem::path& link);

}  // namespace meshperf::node
