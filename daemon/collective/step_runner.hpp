#pragma once
/// How one step of a collective moves (daemon/collective/engine.hpp): every message of
/// the step, with each of its peers at most one send and one receive, progressing together
/// until all are done. Two data paths implement it: plain TCP sockets (collective_tcp_steps.cpp)
/// and RDMA verbs queue pairs (collective_rdma.hpp). The engine sees only this interface.
#include "core/collective/dtype.hpp"
#include "daemon/collective/engine.hpp"
#include "transport/socket.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// One message of a step in flight.
struct message_io {
    std::byte* data = nullptr;   ///< what a send reads, or where a receive lands (its scratch when reducing)
    std::size_t bytes = 0;
    std::size_t done = 0;
    std::byte* reduce_into = nullptr;  ///< a reducing receive: the buffer its elements are added to
    std::size_t reduced = 0;           ///< bytes of it already added
    transport::clock::time_point first_byte{};  ///< a receive: when its first bytes arrived
    std::size_t first_bytes = 0;                 ///< a receive: how many came then (not timed: they were already there)
    bool active() const { return done < bytes; }
};

/// What moves with one peer in one step: at most one message each way.
struct peer_io {
    unsigned peer = 0;
    int fd = -1;  ///< the TCP connection to the peer (the RDMA path watches it for a close)
    message_io send, recv;
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

/// A receive of the last run: the peer it came from, when its first and its last bytes came,
/// and how many bytes came after the first arrival (those the interval times: 0 when the
/// whole message came at once, which times nothing).
struct step_arrival {
    unsigned peer;
    transport::clock::time_point first, last;
    std::size_t timed_bytes = 0;
    std::size_t bytes = 0;
};

/// Runs one step's messages to completion over one rank's data connections. Set the messages
/// with with(peer).send / .recv, then run(). Messages between two ranks are delivered in the
/// order they were sent, as on a stream: a send and the matching receive have the same size.
class step_runner {
public:
    virtual ~step_runner() = default;

    /// The messages with `peer` in the step being set up. Throws collective_fault when this
    /// rank has no connection to it.
    peer_io& with(unsigned peer);

    /// Moves every message; completed() then says when each receive finished. Throws
    /// collective_fault naming the peer (closed, reset, failed, or silent for `stall_limit`),
    /// run_cancelled when the cancel flag is set.
    virtual void run(const step_label& label, std::chrono::milliseconds stall_limit) = 0;

    /// The receives of the last run, in the order they completed.
    const std::vector<step_arrival>& completed() const { return completed_; }

protected:
    explicit step_runner(collective_mesh& mesh) : mesh_(mesh) {}
    /// Whether this rank can move data to and from `peer` on this path.
    virtual bool has_link(unsigned peer) const = 0;
    /// The fault of a step that moved nothing for `limit`: blames a peer this rank still
    /// waits to hear from, else one that does not take what it is sent.
    collective_fault stalled(const step_label& label, std::chrono::milliseconds limit) const;
    /// The fault of a peer that closed its connection.
    static collective_fault closed(const step_label& label, unsigned peer);

    collective_mesh& mesh_;
    std::vector<peer_io> ios_;  // a handful of peers: found by a linear search
    std::vector<step_arrival> completed_;
};

/// The TCP data path: non-blocking sends and receives on mesh.fds, woken by poll.
std::unique_ptr<step_runner> make_tcp_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element);

/// The RDMA data path (mesh.rdma): writes with immediate data into the peer's receive slots,
/// credits back, completions polled. Host memory: `buffers` are the size's send and receive
/// buffers. Device memory (GPUDirect; mesh.rdma's slots must then be device memory): `device`
/// holds the size's buffers, and `buffers` is empty; messages then point into device memory,
/// except host ones outside every buffer (the barrier's flag). The buffers are registered for
/// the runner's life; a message outside them is staged through the link's own memory. Throws
/// collective_fault when a buffer cannot be registered or the slots' memory does not match.
std::unique_ptr<step_runner> make_rdma_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element,
                                                   const std::vector<std::span<std::byte>>& buffers,
                                                   collective_device_memory* device);

}  // namespace meshperf::daemon
