#include "core/units.hpp"
#include "core/figure_text.hpp"

#include <fmt/format.h>

namespace meshperf::core {

std::string gbit_gbyte_text(double bytes_per_s, int digits) {
    return fmt::format("{} Gbit/s ({} GB/s)", plain_number(gbit_from_bytes_per_s_by_factor(bytes_per_s), digits),
                       plain_number(gbyte_from_bytes_per_s_by_factor(bytes_per_s), digits));
}

}  // namespace meshperf::core
