#pragma once
/// The RDMA data path of a collective step (the step runner's, transport/mesh/step_runner.hpp):
/// pieces written with immediate data into the peers' receive slots, credited back, the
/// completions polled (the protocol: mesh_links.hpp). A plain loop: it allocates nothing per
/// step, throws nothing, and says how it ended in a step_status. It spins on the CQs for
/// spin_for, then arms them and sleeps on the endpoint's completion channel together with
/// the peers' sockets (a socket that reads end-of-stream is a peer that closed it), so ranks
/// that share CPUs, or a software RDMA device's kernel threads, get them.
#include "core/collective/dtype.hpp"
#include "transport/rdma/mesh_links.hpp"
#include "transport/rdma/mr.hpp"
#include "transport/step_io.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <poll.h>
#include <span>
#include <vector>

namespace meshperf::transport::rdma {

class mesh_steps {
public:
    /// Host memory: `buffers` are the size's send and receive buffers. Device memory
    /// (GPUDirect; the links' slots must then be device memory): `device` moves the pieces on
    /// the device and `device_buffers` are the size's buffers there, while `buffers` is
    /// empty; messages then point into device memory, except host ones outside every buffer
    /// (the barrier's flag). The buffers are registered for the loop's life; a message outside
    /// them is staged through the link's own memory. Throws mesh::step_setup_error when a
    /// buffer cannot be registered or the slots' memory does not match.
    mesh_steps(std::shared_ptr<mesh_links> links, const std::atomic<bool>& cancel, core::dtype element,
               const std::vector<std::span<std::byte>>& buffers, device_transfers* device,
               const std::vector<device_allocation*>& device_buffers);

    /// How long a step spins on its CQs before it sleeps on the completion channel: a few
    /// round trips of a hardware link, so a live exchange never sleeps.
    static constexpr auto spin_for = std::chrono::microseconds(50);

    /// Moves every message of `ios` until all are done, the cancel flag is set, a link
    /// fails, a peer closes its socket, or nothing moves for `stall_limit`. The receives that
    /// completed go to `completed`, in the order they did.
    mesh::step_status run(std::span<mesh::peer_io> ios, std::chrono::milliseconds stall_limit,
                          std::vector<mesh::step_arrival>& completed);

    bool has_link(unsigned peer) const noexcept { return links_->has(peer); }

private:
    /// A registered buffer of the size being run.
    struct registered {
        std::byte* begin;
        std::size_t bytes;
        std::unique_ptr<memory_region> mr;
    };

    void register_device_buffers(const std::vector<device_allocation*>& device_buffers);
    bool arm(std::span<mesh::peer_io> ios, mesh::step_status& st);
    bool sleep_until_completion(std::span<mesh::peer_io> ios, mesh::step_status& st);
    bool poll(mesh::peer_io& io, mesh_link& link, mesh::step_status& st);
    bool consume(mesh::peer_io& io, mesh_link& link, std::vector<mesh::step_arrival>& completed, mesh::step_status& st);
    bool send_credits(unsigned peer, mesh_link& link, bool& moved, mesh::step_status& st);
    bool post_piece(mesh::peer_io& io, mesh_link& link, std::size_t& posted, mesh::step_status& st);
    bool post(unsigned peer, mesh_link& link, ibv_send_wr& wr, mesh::step_status& st);
    bool link_failed(unsigned peer, std::string what, mesh::step_status& st);
    template <class Op> bool on_device(const char* doing, mesh::step_status& st, Op op);
    const registered* region_of(const std::byte* p, std::size_t len) const;

    std::shared_ptr<mesh_links> links_;  // the PD outlives the regions registered in it
    const std::atomic<bool>& cancel_;
    core::dtype element_;
    device_transfers* device_;  // GPUDirect: the size's device memory; null: host memory
    std::vector<registered> regions_;
    std::vector<std::size_t> posted_;  // per ios entry: bytes of its send posted
    std::vector<pollfd> fds_;          // kept, so a sleep allocates nothing
};

}  // namespace meshperf::transport::rdma
