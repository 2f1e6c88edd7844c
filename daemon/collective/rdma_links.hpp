#pragma once
/// The RDMA side of a collective run, as the daemon sets it up: one RC queue pair per mesh
/// peer (transport/rdma/mesh_links.hpp), whose descriptions this daemon carries over the
/// mesh's TCP connections (which afterwards only tell when a peer has gone), and the RDMA step
/// runner of a size (transport/mesh/step_runner.hpp). Built from rdma_links.cpp where RDMA is,
/// else from rdma_links_unavailable.cpp (daemon/CMakeLists.txt chooses).
#include "core/collective/dtype.hpp"
#include "core/collective/spec.hpp"
#include "transport/link_counters_reader.hpp"
#include "transport/mesh/connections.hpp"
#include "transport/mesh/device_memory.hpp"
#include "transport/mesh/step_runner.hpp"
#include "transport/rdma/device_memory.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// Opens this rank's RDMA endpoint (spec.rdma_device, port and GID index; by default the
/// device that holds the mesh sockets' local address, as a sweep chooses it), one QP per peer
/// with a socket in `mesh`; exchanges the QPs' descriptions over those sockets (each a 4-byte
/// big-endian length and the description's JSON), connects every QP, posts its receives, and
/// swaps a ready byte ('R') with every peer (so no write can reach a QP that is not ready).
/// With `gpu` the receive slots are that device memory, registered for GPUDirect RDMA
/// (dma-buf or nvidia-peermem), and the step runners must be given the size's device memory.
/// Throws session_error with the device's error ("no RDMA device found", a port down, the
/// memlock limit, a GPU memory that cannot be registered) or the peer that did not answer by
/// `deadline`.
std::shared_ptr<transport::rdma::mesh_links> connect_rdma_links(const transport::mesh::connections& mesh,
                                                                const core::collective_spec& spec,
                                                                transport::clock::time_point deadline,
                                                                std::shared_ptr<const transport::rdma::device_memory> gpu);

/// How the links hold device memory, for the run's result: empty for host memory, else
/// "GPUDirect RDMA, cuda:0 registered with rxe0 port 1 by peermem".
std::string rdma_memory_note(const transport::rdma::mesh_links&);

/// Points `target` at the RDMA device and port the links run over, so a size's port
/// counters and hw_counters are read with its NIC's (docs/counters.md). Leaves it as it is
/// where RDMA is not built.
void count_rdma_port(const transport::rdma::mesh_links&, transport::link_counter_target& target);

/// The step runner of one size over mesh.rdma (transport::mesh::make_rdma_step_runner).
/// Throws collective_fault when a buffer cannot be registered, or where RDMA is not built.
std::unique_ptr<transport::mesh::step_runner> open_rdma_step_runner(transport::mesh::connections& mesh,
                                                                    const std::atomic<bool>& cancel, core::dtype element,
                                                                    const std::vector<std::span<std::byte>>& buffers,
                                                                    transport::mesh::device_memory* device);

}  // namespace meshperf::daemon
