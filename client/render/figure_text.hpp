#pragma once
/// The client's name for core/figure_text.hpp: numbers for people, never in scientific
/// notation.
#include "core/figure_text.hpp"

namespace meshperf::client {

using core::significant_text;

}  // namespace meshperf::client
