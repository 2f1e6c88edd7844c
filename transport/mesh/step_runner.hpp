#pragma once
/// How one step of a collective moves (the engine, daemon/collective/engine.hpp, drives it):
/// every message of the step, with each of its peers at most one send and one receive,
/// progressing together until all are done. Each data path implements it: plain TCP sockets
/// (transport/tcp/mesh_steps.hpp, make_tcp_step_runner below) and a transport's own links
/// (connections.hpp's data_links; RDMA: rdma_data_links.hpp). The
/// engine sees only this interface; a step says how it ended in a step_status
/// (transport/step_io.hpp), which the daemon words for the user.
#include "core/collective/dtype.hpp"
#include "transport/mesh/connections.hpp"
#include "transport/mesh/device_memory.hpp"
#include "transport/step_io.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace meshperf::transport::mesh {

/// Runs one step's messages to completion over one rank's data connections. Set the messages
/// with with(peer)->send / ->recv, then run(). Messages between two ranks are delivered in the
/// order they were sent, as on a stream: a send and the matching receive have the same size.
class step_runner {
public:
    virtual ~step_runner() = default;

    /// The messages with `peer` in the step being set up; null when this rank has no
    /// connection to it on this path.
    peer_io* with(unsigned peer);

    /// Moves every message; completed() then says when each receive finished. Ends with the
    /// peer that closed, reset, failed, or was silent for `stall_limit`, or cancelled when the
    /// cancel flag is set.
    step_status run(std::chrono::milliseconds stall_limit);

    /// The receives of the last run, in the order they completed.
    const std::vector<step_arrival>& completed() const { return completed_; }

protected:
    explicit step_runner(connections& mesh) : mesh_(mesh) {}
    /// Whether this rank can move data to and from `peer` on this path.
    virtual bool has_link(unsigned peer) const = 0;
    /// The data path's loop over the step's messages.
    virtual step_status move(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                             std::vector<step_arrival>& completed) = 0;

    connections& mesh_;

private:
    std::vector<peer_io> ios_;  // a handful of peers: found by a linear search
    std::vector<step_arrival> completed_;
};

/// The TCP data path: non-blocking sends and receives on mesh.fds, woken by poll.
std::unique_ptr<step_runner> make_tcp_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element);

}  // namespace meshperf::transport::mesh
