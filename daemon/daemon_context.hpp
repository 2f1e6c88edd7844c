#pragma once
/// What every part of meshperfd shares: who this host is, the one-measurement gate, the
/// data-stream hand-over, the run limits and the cluster token.
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "daemon/stream_registry.hpp"

#include <string>

namespace meshperf::daemon {

struct daemon_context {
    core::host_info host;          ///< this daemon, as results name it
    core::run_limits limits;       ///< bounds on every run this daemon starts or serves
    std::string token;             ///< cluster bearer token; empty = no authentication
    stream_registry streams;
    measurement_gate gate;
};

}  // namespace meshperf::daemon
