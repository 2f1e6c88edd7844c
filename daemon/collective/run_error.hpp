#pragma once
/// How a collective run fails, as its coordinator reports it (daemon/collective/coordinator.hpp,
/// daemon/collective/size_loop.hpp) and the run manager records it.
#include <optional>
#include <stdexcept>
#include <string>

namespace meshperf::daemon {

/// A failed collective run: what() names the rank and the step where one can be named.
class collective_run_error : public std::runtime_error {
public:
    collective_run_error(const std::string& what, std::optional<unsigned> rank, bool at_start)
        : std::runtime_error(what), failed_rank(rank), failed_at_start(at_start) {}
    std::optional<unsigned> failed_rank;
    bool failed_at_start;
};

}  // namespace meshperf::daemon
