#pragma once
/// The RDMA side of a collective run, as the daemon sets it up: one RC queue pair per mesh
/// peer (transport/rdma/mesh_links.hpp), whose descriptions this daemon carries over the
/// mesh's TCP connections (which afterwards only tell when a peer has gone); the engine then
/// moves the data over them (transport/mesh/rdma_data_links.hpp). The RDMA entry's collective
/// plug-in (daemon/transports/rdma/entry.cpp).
#include "core/collective/spec.hpp"
#include "daemon/collective/engine.hpp"
#include "daemon/test_hooks/collective_hooks.hpp"
#include "transport/socket.hpp"

namespace meshperf::daemon {

/// Opens this rank's RDMA endpoint (spec.rdma_device, port and GID index; by default the
/// device that holds the mesh sockets' local address, as a sweep chooses it), one QP per peer
/// with a socket in `mesh`; exchanges the QPs' descriptions over those sockets (each a 4-byte
/// big-endian length and the description's JSON), connects every QP, posts its receives, and
/// swaps a ready byte ('R') with every peer (so no write can reach a QP that is not ready);
/// then sets mesh.links. With GPU memory in spec.memory (emulated under `hooks`) the receive
/// slots are that device memory, registered for GPUDirect RDMA (dma-buf or nvidia-peermem).
/// Throws session_error with the device's error ("no RDMA device found", a port down, the
/// memlock limit, a GPU memory that cannot be registered) or the peer that did not answer by
/// `deadline`.
void connect_rdma_links(collective_mesh& mesh, const core::collective_spec& spec, transport::clock::time_point deadline,
                        const collective_test_hooks& hooks);

}  // namespace meshperf::daemon
