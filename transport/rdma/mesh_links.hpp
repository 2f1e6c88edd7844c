#pragma once
/// The queue pairs of one rank of a collective run over RDMA: one endpoint (device, PD,
/// completion channel) with one RC queue pair per mesh peer, each with its receive slots, and
/// the per-peer state of the slot protocol (mesh_steps.hpp). Set-up only: the daemon carries
/// each QP's description to its peer and back (it owns the connections) and hands the peer's
/// to connect(). Opens no socket.
///
/// Protocol, per direction of a pair: the receiver exposes `mesh_slot_count` slots of
/// `mesh_slot_bytes`; the sender splits each message into pieces of at most a slot and writes
/// piece n, with immediate data holding its length, into slot n mod mesh_slot_count once the
/// receiver has credited piece n − mesh_slot_count; the receiver copies (or reduces) a piece
/// into its message and sends the credit back as a zero-byte send with immediate data (the
/// count). Pieces stay in order (RC), so a step's messages between two ranks are delivered as
/// on a stream, and the same plans run on both data paths. The barrier travels the same way.
#include "transport/rdma/endpoint.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::transport::rdma {

/// Receive slots per direction of a link, and their size: 2 MiB in flight per link, which
/// covers a 100 Gbit/s link's bandwidth-delay product at 150 µs.
inline constexpr std::uint32_t mesh_slot_count = 8;
inline constexpr std::size_t mesh_slot_bytes = 256 * 1024;
/// Work requests in flight per QP: pieces and credits sent, pieces and credits not yet polled.
inline constexpr std::uint32_t mesh_send_depth = 2 * mesh_slot_count + 4;
inline constexpr std::uint32_t mesh_recv_depth = 2 * mesh_slot_count + 4;

/// One direction pair of a link, as this rank keeps it for the whole run.
struct mesh_link {
    std::size_t slot = 0;            ///< the QP's index in the endpoint
    std::uint64_t sent = 0;          ///< pieces written to the peer, ever
    std::uint64_t credited = 0;      ///< of those, pieces the peer has consumed (its credits)
    std::uint64_t arrived = 0;       ///< pieces from the peer that came, ever
    std::uint64_t consumed = 0;      ///< of those, pieces consumed here (arrived − consumed wait in their slots)
    std::array<std::uint32_t, mesh_slot_count> length{};  ///< slot i: the length of the piece in it
    std::uint32_t owed = 0;          ///< credits consumed here and not sent back yet
    std::uint32_t data_in_flight = 0, credits_in_flight = 0;  ///< sends not completed
};

/// Where the endpoint is opened: as for a sweep, by default the device that holds the local
/// address of the mesh's sockets.
struct mesh_link_options {
    std::string local_ip;             ///< the local address of a mesh socket
    std::string device;               ///< empty: chosen by local_ip (endpoint_options::device)
    std::uint8_t port = 1;
    std::optional<int> gid_index;
    /// Null: host memory. Else the receive slots are this device memory, registered for
    /// GPUDirect RDMA (dma-buf or nvidia-peermem); the step loops must then be given the
    /// size's device memory.
    std::shared_ptr<const device_memory> gpu;
};

class mesh_links {
public:
    /// Opens the endpoint with one QP per rank of `peers` (ascending), of `ranks` ranks in
    /// all. Throws rdma_error ("no RDMA device found", a port down, the memlock limit, a GPU
    /// memory that cannot be registered) or core::spec_error.
    mesh_links(const mesh_link_options& options, const std::vector<unsigned>& peers, std::size_t ranks);
    mesh_links(const mesh_links&) = delete;
    mesh_links& operator=(const mesh_links&) = delete;

    /// The description of the QP to `peer`, for the daemon to send it.
    endpoint_info local_info(unsigned peer) const;
    /// Connects the QP to `peer` against its one-QP description and posts its receives.
    /// Throws as endpoint::connect_qp and qp_slot::top_up_receives do.
    void connect(unsigned peer, const endpoint_info& remote);

    bool has(unsigned peer) const noexcept { return peer < links_.size() && links_[peer]; }
    mesh_link& link(unsigned peer) { return *links_[peer]; }
    qp_slot& slot(const mesh_link& l) { return ep_->slot(l.slot); }
    endpoint& ep() noexcept { return *ep_; }
    const endpoint& ep() const noexcept { return *ep_; }

    /// How the links hold device memory, for the run's result: empty for host memory, else
    /// "GPUDirect RDMA, cuda:0 registered with rxe0 port 1 by peermem".
    std::string memory_note() const;

private:
    std::unique_ptr<endpoint> ep_;
    std::vector<std::optional<mesh_link>> links_;  ///< index = rank
};

}  // namespace meshperf::transport::rdma
