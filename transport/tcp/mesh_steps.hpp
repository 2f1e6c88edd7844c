#pragma once
/// The TCP data path of a collective step (the step runner's, transport/mesh/step_runner.hpp):
/// every message of the step progressing together on the mesh's non-blocking sockets, woken
/// by poll, reducing receives summed as whole elements arrive. A plain loop: it allocates
/// nothing per step (its poll set is kept), throws nothing, and says how it ended in a
/// step_status.
#include "core/collective/dtype.hpp"
#include "transport/step_io.hpp"

#include <atomic>
#include <chrono>
#include <poll.h>
#include <span>
#include <vector>

namespace meshperf::transport::tcp {

class mesh_steps {
public:
    /// `rcvlowat`: SO_RCVLOWAT as last set on each socket (index = rank; missing: the
    /// kernel's 1), kept with the sockets from one size to the next.
    mesh_steps(std::vector<int>& rcvlowat, const std::atomic<bool>& cancel, core::dtype element);

    /// Bytes a receive waits for before poll wakes it (SO_RCVLOWAT), less at a message's
    /// end: on a paced link data comes a packet at a time, and waking for each costs more CPU
    /// than 6 ranks on 2 cores have (the netns cluster lost 5% of its busbw at 32 MiB so).
    /// A peer slower than this many bytes per stall limit (52 kbit/s) reads as stalled.
    static constexpr std::size_t wake_bytes = 32 * 1024;

    /// Moves every message of `ios` (each with its peer's socket) until all are done, the
    /// cancel flag is set, a peer fails or closes, or nothing moves for `stall_limit`. The
    /// receives that completed go to `completed`, in the order they did.
    mesh::step_status run(std::span<mesh::peer_io> ios, std::chrono::milliseconds stall_limit,
                          std::vector<mesh::step_arrival>& completed);

private:
    bool wake_at(const mesh::peer_io& p, mesh::step_status& st);
    bool send_some(mesh::peer_io& p, bool& moved, mesh::step_status& st);
    bool recv_some(mesh::peer_io& p, bool& moved, std::vector<mesh::step_arrival>& completed, mesh::step_status& st);

    std::vector<int>& rcvlowat_;
    const std::atomic<bool>& cancel_;
    core::dtype element_;
    std::size_t w_;
    std::vector<pollfd> pollfds_;  // kept, so a step allocates nothing
};

}  // namespace meshperf::transport::tcp
