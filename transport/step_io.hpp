#pragma once
/// What one step of a collective moves with its peers, and how the step ended: the types the
/// step loops of both data paths (tcp/mesh_steps, rdma/mesh_steps) and the step-runner
/// interface over them (mesh/step_runner.hpp) share. Header-only, here beside
/// stream_thread.hpp so that tcp/ and rdma/ may include it; namespace transport::mesh.
#include "transport/socket.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace meshperf::transport::mesh {

/// One message of a step in flight.
struct message_io {
    std::byte* data = nullptr;   ///< what a send reads, or where a receive lands (its scratch when reducing)
    std::size_t bytes = 0;
    std::size_t done = 0;
    std::byte* reduce_into = nullptr;  ///< a reducing receive: the buffer its elements are added to
    std::size_t reduced = 0;           ///< bytes of it already added
    clock::time_point first_byte{};    ///< a receive: when its first bytes arrived
    std::size_t first_bytes = 0;       ///< a receive: how many came then (not timed: they were already there)
    bool active() const { return done < bytes; }
};

/// What moves with one peer in one step: at most one message each way.
struct peer_io {
    unsigned peer = 0;
    int fd = -1;  ///< the TCP connection to the peer (the RDMA path watches it for a close)
    message_io send, recv;
};

/// A receive of the last run: the peer it came from, when its first and its last bytes came,
/// and how many bytes came after the first arrival (those the interval times: 0 when the
/// whole message came at once, which times nothing).
struct step_arrival {
    unsigned peer;
    clock::time_point first, last;
    std::size_t timed_bytes = 0;
    std::size_t bytes = 0;
};

/// How a step ended. The daemon words each for the user (daemon/collective/step_fault.cpp).
enum class step_end : std::uint8_t {
    ok,
    cancelled,          ///< the cancel flag was set
    stalled_receiving,  ///< nothing came from `peer` for the stall limit
    stalled_sending,    ///< `peer` took nothing of what this rank sends for the stall limit
    stalled,            ///< nothing moved for the stall limit, no peer to blame
    peer_closed,        ///< `peer` closed its connection
    send_failed,        ///< sending to `peer` failed: `error`
    recv_failed,        ///< receiving from `peer` failed: `error`
    poll_failed,        ///< poll() failed: `error`
    rcvlowat_failed,    ///< SO_RCVLOWAT could not be set on the connection to `peer`: `error`
    link_failed,        ///< RDMA: the queue pair to `peer` failed: `detail`
    bad_piece,          ///< RDMA: `peer` sent a piece of `got` bytes where the step expects `expected` more
    device_failed,      ///< RDMA GPUDirect: device memory failed while `doing`: `detail`
};

/// A step's outcome: plain data, filled in once when the loop ends.
struct step_status {
    step_end end = step_end::ok;
    unsigned peer = 0;             ///< the peer it concerns, where the end names one
    int error = 0;                 ///< errno value (send, recv, poll, SO_RCVLOWAT)
    std::size_t got = 0, expected = 0;  ///< bad_piece
    const char* doing = nullptr;   ///< device_failed: what the data path asked of the device
    std::string detail;            ///< link_failed, device_failed: what failed, in words
    bool ok() const noexcept { return end == step_end::ok; }
};

/// The end of a step that moved nothing for the stall limit: it blames a peer this rank
/// still waits to hear from, else one that does not take what it is sent.
inline step_status stalled_status(std::span<const peer_io> ios) noexcept {
    step_status st;
    st.end = step_end::stalled;
    for (const auto& p : ios)
        if (p.recv.active()) {
            st.end = step_end::stalled_receiving;
            st.peer = p.peer;
            return st;
        }
    for (const auto& p : ios)
        if (p.send.active()) {
            st.end = step_end::stalled_sending;
            st.peer = p.peer;
            return st;
        }
    return st;
}

/// A step runner that cannot be set up for a size (a buffer the NIC cannot register): what()
/// is the sentence for the user.
class step_setup_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace meshperf::transport::mesh
