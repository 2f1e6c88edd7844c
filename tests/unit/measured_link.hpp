#pragma once
// A measured link for the matrix tests: from -> to with both figures.
#include "analysis/outliers.hpp"

namespace meshperf::test {

/// Link from -> to, reachable, with `gbit` Gbit/s and `lat_us` us one way.
inline analysis::link_sample measured_link(std::size_t from, std::size_t to, double gbit, double lat_us) {
    analysis::link_sample l;
    l.from = from;
    l.to = to;
    l.gbit_per_s = gbit;
    l.lat_us = lat_us;
    return l;
}

}  // namespace meshperf::test
