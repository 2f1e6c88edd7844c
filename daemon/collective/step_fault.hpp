#pragma once
/// A collective's data-path failures as the daemon reports them: the step loops in
/// transport/ end with a status (transport/step_io.hpp), and this turns one into the
/// collective_fault that names the peer and the step, or run_cancelled.
#include "transport/step_io.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace meshperf::daemon {

/// The data path failed because of one peer: it closed or reset its connection, or sent
/// nothing for longer than the stall limit. what() is a sentence naming it and the step.
class collective_fault : public std::runtime_error {
public:
    collective_fault(const std::string& what, std::optional<unsigned> peer_rank)
        : std::runtime_error(what), peer(peer_rank) {}
    std::optional<unsigned> peer;  ///< the rank the fault points at, when one does
};

/// Where a rank is, for fault messages only: formatted when a fault happens, never per step
/// ("iteration 4, step 7 of 10", "verification, barrier round 2").
struct step_label {
    const char* phase;             ///< "warm-up iteration", "iteration" or "verification"
    std::uint64_t iteration = 0;   ///< 1-based; 0: the phase has no number
    const char* part = "step";     ///< "step" or "barrier round"
    std::size_t index = 0;         ///< 1-based
    std::size_t count = 0;         ///< steps of the iteration; 0: not said
    std::string text() const;
};

/// Throws what a step that ended with `st` (not ok) means: run_cancelled, or a
/// collective_fault saying the step (`label`), the peer and what happened, blaming the peer
/// where the failure is its (`stall_limit`: the limit the step ran under).
[[noreturn]] void throw_step_fault(const transport::mesh::step_status& st, const step_label& label,
                                   std::chrono::milliseconds stall_limit);

}  // namespace meshperf::daemon
