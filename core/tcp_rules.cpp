// TCP's rules for the specs that name it (core/transport_rules.hpp).
#include "core/error.hpp"
#include "core/run_spec.hpp"
#include "core/transport_rules.hpp"

#include <fmt/format.h>

namespace meshperf::core {
namespace {

void tcp_streams(const run_spec& s, const run_limits& lim) {
    if (s.streams == 0 || s.streams > lim.max_streams)
        throw spec_error(fmt::format("streams {} is out of range: use 1..{} (limits.max_streams of this daemon is {}; an "
                                     "operator may raise it in [limits] max_streams)",
                                     s.streams, lim.max_streams, lim.max_streams));
}

}  // namespace

transport_rules tcp_rules() { return {.name = "tcp", .check_streams = tcp_streams}; }

}  // namespace meshperf::core
