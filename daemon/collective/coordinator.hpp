#pragma once
/// The coordinator of a collective run: the daemon that
/// took `POST /v1/collectives`. It opens a peer session with every other rank and hands it the
/// plan (frames in daemon/collective/wire.hpp), has every rank connect its data
/// connections, runs its own rank of every size beside them, and assembles each size from
/// every rank's timing (core::assemble_collective_point). A failure names the rank it is put
/// on and the step; the sizes done before it are kept.
#include "core/collective/result.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/sweep/initiator.hpp"

#include <atomic>

namespace meshperf::daemon {

/// Measures every op and size of result.spec, appending points to result.points and emitting
/// "started" and "point" events. Throws collective_run_error when the run fails, or
/// run_cancelled. Holds this daemon's measurement gate, and through the sessions every
/// other rank's, for the whole run.
void execute_collective(daemon_context& ctx, core::collective_result& result, const event_sink& emit,
                        const std::atomic<bool>& cancel);

/// A failed collective run: what() names the rank and the step where one can be named.
class collective_run_error : public std::runtime_error {
public:
    collective_run_error(const std::string& what, std::optional<unsigned> rank, bool at_start)
        : std::runtime_error(what), failed_rank(rank), failed_at_start(at_start) {}
    std::optional<unsigned> failed_rank;
    bool failed_at_start;
};

}  // namespace meshperf::daemon
