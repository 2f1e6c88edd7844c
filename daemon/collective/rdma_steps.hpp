#pragma once
/// The RDMA data path of a collective run: one RC queue
/// pair per mesh peer on one device and protection domain, set up over the mesh's TCP
/// connections (collective_mesh.hpp), which afterwards only tell when a peer has gone.
///
/// Protocol, per direction of a pair: the receiver exposes `slot_count` slots of `slot_bytes`;
/// the sender splits each message into pieces of at most a slot and writes piece n, with
/// immediate data holding its length, into slot n mod slot_count once the receiver has
/// credited piece n − slot_count; the receiver copies (or reduces) a piece into its message
/// and sends the credit back as a zero-byte send with immediate data (the count). Pieces stay
/// in order (RC), so a step's messages between two ranks are delivered as on a stream, and the
/// same step_runner drives both paths (collective_steps.hpp). The barrier travels the same way.
#include "core/collective/spec.hpp"
#include "daemon/collective/step_runner.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace meshperf::daemon {

/// Receive slots per direction of a link, and their size: 2 MiB in flight per link, which
/// covers a 100 Gbit/s link's bandwidth-delay product at 150 µs.
inline constexpr std::uint32_t rdma_slot_count = 8;
inline constexpr std::size_t rdma_slot_bytes = 256 * 1024;

/// Opens this rank's RDMA endpoint (spec.rdma_device, port and GID index; by default the
/// device that holds the mesh sockets' local address, as a sweep chooses it), one QP per peer
/// with a socket in `mesh`; exchanges the QPs'
/// descriptions over those sockets, connects every QP, posts its receives, and waits until
/// every peer has done the same (so no write can reach a QP that is not ready). With `gpu`
/// the receive slots are that device memory, registered for GPUDirect RDMA (dma-buf or
/// nvidia-peermem), and the step runners must be given the size's device memory. Throws
/// session_error with the device's error ("no RDMA device found", a port down, the memlock
/// limit, a GPU memory that cannot be registered) or the peer that did not answer by `deadline`.
std::shared_ptr<collective_rdma_links> connect_rdma_links(const collective_mesh& mesh, const core::collective_spec& spec,
                                                          transport::clock::time_point deadline,
                                                          std::shared_ptr<const transport::rdma::device_memory> gpu);

/// How the links hold device memory, for the run's result: empty for host memory, else
/// "GPUDirect RDMA, cuda:0 registered with rxe0 by peermem".
std::string rdma_memory_note(const collective_rdma_links&);

}  // namespace meshperf::daemon
