#pragma once
/// Names as Linux allows them: an interface may be called `c@tl`, `ra"q`
/// or hold bytes that are not UTF-8, and meshperf must measure it; a name must never leave
/// the sysfs directory it is looked up in. The one place those names are judged.
#include <cstddef>
#include <string_view>

namespace meshperf::core {

/// The longest interface name Linux allows, in bytes (IFNAMSIZ − 1).
inline constexpr std::size_t max_netdev_name_bytes = 15;

/// Whether Linux would give an interface (or an RDMA device) this name, as the kernel's
/// dev_valid_name judges it: 1 to 15 bytes, not "." or "..", no '/', ':', NUL or white space
/// (space, \t \n \v \f \r); any other byte is allowed. A name that arrived in JSON may carry
/// U+FFFD where the sender's name held a byte that is not UTF-8 (the daemons write JSON that
/// way): each U+FFFD counts as the one byte it replaced.
bool valid_netdev_name(std::string_view name);

/// Whether `name` can be a file in one sysfs directory (a counter of statistics/ or
/// hw_counters/): 1 to 64 bytes, not "." or "..", no '/' or NUL.
bool valid_sysfs_file_name(std::string_view name);

}  // namespace meshperf::core
