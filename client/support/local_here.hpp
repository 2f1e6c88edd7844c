#pragma once
/// `meshperf local` without a HOST: the copy sweep in this process. Built from local_here.cpp
/// where the CUDA toolkit is, else from local_here_unavailable.cpp; nothing else in the CLI
/// knows which.
#include "core/local_copy_spec.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::client {

/// Runs the sweep here (`spec` checked by core::validate) and returns its meshperf.local/1 document; `progress` prints each
/// point to stderr. Throws client_error (run failed) when CUDA cannot run on this node (the
/// classified reason) or a copy fails; without CUDA in this meshperf, always (saying to
/// give a HOST whose meshperfd has it).
nlohmann::json sweep_here(const core::local_copy_spec& spec, bool progress);

}  // namespace meshperf::client
