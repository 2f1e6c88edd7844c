#pragma once
/// The libfabric data path of a collective step (the step runner's,
/// transport/mesh/step_runner.hpp): each message split into chunks of chunk_bytes, sent as
/// tagged messages (tag: the sender's rank) to the peer's address, received in order into the
/// message's buffer (a reducing receive adds each chunk into its target as it completes), the
/// completion queue polled. A plain loop: it allocates nothing per step, throws nothing, and
/// says how it ended in a step_status. It watches the peers' sockets for a close. It spins on
/// the completion queue for 50 µs, then sleeps on its descriptor (FI_WAIT_FD) with the
/// sockets, so ranks that share CPUs get them.
#include "core/collective/dtype.hpp"
#include "transport/ofi/mesh_links.hpp"
#include "transport/step_io.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <poll.h>
#include <span>
#include <vector>

namespace meshperf::transport::ofi {

class mesh_steps {
public:
    /// Chunks of one message in flight each way, and their size.
    static constexpr std::size_t chunks_in_flight = 8;
    static constexpr std::size_t chunk_bytes = 256 * 1024;

    /// Throws mesh::step_setup_error when the provider asks registered memory (FI_MR_LOCAL),
    /// which collectives over libfabric do not do yet.
    mesh_steps(std::shared_ptr<mesh_links> links, const std::atomic<bool>& cancel, core::dtype element);

    /// Moves every message of `ios` until all are done, the cancel flag is set, an operation
    /// fails, a peer closes its socket, or nothing moves for `stall_limit`. The receives that
    /// completed go to `completed`, in the order they did. Ends with nothing of this step
    /// posted (receives cancelled, sends retired), or marks the links broken.
    mesh::step_status run(std::span<mesh::peer_io> ios, std::chrono::milliseconds stall_limit,
                          std::vector<mesh::step_arrival>& completed);

    bool has_link(unsigned peer) const noexcept { return links_->has(peer); }

private:
    /// One chunk in flight: its operation context first (the provider's), then what it is.
    struct chunk_op {
        alignas(16) unsigned char context[endpoint::operation_context_bytes];
        std::size_t io = 0;
        bool receive = false;
        std::size_t offset = 0, len = 0;
        bool busy = false;
    };
    struct progress {
        std::size_t send_posted = 0, recv_posted = 0;
        unsigned sends_out = 0, recvs_out = 0;
    };

    bool post(std::span<mesh::peer_io> ios, std::size_t k, mesh::step_status& st);
    chunk_op* free_op();
    bool complete(std::span<mesh::peer_io> ios, const endpoint::completion& c, std::vector<mesh::step_arrival>& completed);
    bool peer_closed(std::span<mesh::peer_io> ios, mesh::step_status& st);
    void retire(std::span<mesh::peer_io> ios);
    /// Spun with nothing done: sleeps on the completion queue's descriptor and the peers'
    /// sockets (or naps, where the provider has no descriptor), at most `left` and 100 ms.
    void sleep_until_completion(std::span<mesh::peer_io> ios, std::chrono::steady_clock::duration left);

    std::shared_ptr<mesh_links> links_;
    const std::atomic<bool>& cancel_;
    core::dtype element_;
    std::vector<chunk_op> ops_;
    std::vector<progress> progress_;
    std::vector<pollfd> fds_;  // kept, so a sleep allocates nothing after the first
};

}  // namespace meshperf::transport::ofi
