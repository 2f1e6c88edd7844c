// The RDMA side of a collective run: the QPs' descriptions carried over the mesh's TCP
// connections (rdma_links.hpp).
#include "daemon/transports/rdma/rdma_links.hpp"

#include "daemon/runtime/gpu_support.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/test_hooks/emulated_gpu.hpp"
#include "daemon/transports/link_setup.hpp"
#include "transport/mesh/rdma_data_links.hpp"
#include "transport/rdma/mesh_links.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

namespace rdma = transport::rdma;
using transport::clock;

namespace {

/// Opens this rank's queue pairs to every peer with a socket in `mesh` and connects them
/// (connect_rdma_links below, with the receive slots in `gpu` where given).
std::shared_ptr<rdma::mesh_links> open_rdma_links(const collective_mesh& mesh, const core::collective_spec& spec,
                                                  clock::time_point deadline, std::shared_ptr<const rdma::device_memory> gpu) {
    std::vector<unsigned> peers;
    for (unsigned q = 0; q < mesh.fds.size(); ++q)
        if (mesh.fds[q]) peers.push_back(q);
    if (peers.empty()) throw session_error("this rank has no peer to open RDMA queue pairs to");
    rdma::mesh_link_options o;
    o.local_ip = transport::local_ip(mesh.fds[peers.front()].get());
    o.device = spec.rdma_device;
    o.port = static_cast<std::uint8_t>(spec.rdma_port);
    o.gid_index = spec.gid_index;
    o.gpu = std::move(gpu);
    std::shared_ptr<rdma::mesh_links> links;
    try {
        links = std::make_shared<rdma::mesh_links>(o, peers, mesh.fds.size());
    } catch (const std::exception& e) {
        throw session_error(fmt::format("cannot open RDMA for the collective: {}", e.what()));
    }
    const auto name = [](unsigned q) { return fmt::format("rank {}", q); };
    const link_setup setup("RDMA", deadline);
    std::vector<int> fds;
    std::vector<std::string> names;
    for (auto q : peers) {
        fds.push_back(mesh.fds[q].get());
        names.push_back(name(q));
        setup.send(mesh.fds[q].get(), nlohmann::json(links->local_info(q)), name(q));
    }
    for (auto q : peers) {
        const auto j = setup.receive(mesh.fds[q].get(), name(q));
        rdma::endpoint_info remote;
        try {
            remote = rdma::endpoint_info_from_json(j);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("{} sent a malformed RDMA description: {}", name(q), e.what()));
        }
        try {
            links->connect(q, remote);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("cannot connect the RDMA queue pair to {}: {}", name(q), e.what()));
        }
    }
    setup.exchange_ready(fds, names);
    return links;
}

/// The device memory of this rank's RDMA receive slots: null for host memory, else the GPU
/// of spec.memory (emulated under the hooks), so the NIC writes into the GPU (GPUDirect).
std::shared_ptr<const rdma::device_memory> receive_slot_memory(const core::collective_spec& spec,
                                                               const collective_test_hooks& hooks) {
    if (spec.memory == "host") return nullptr;
    return hooks.emulated_gpu ? emulated_rdma_memory(spec.memory) : rdma_device_memory(spec.memory);
}

}  // namespace

void connect_rdma_links(collective_mesh& mesh, const core::collective_spec& spec, clock::time_point deadline,
                        const collective_test_hooks& hooks) {
    std::shared_ptr<const rdma::device_memory> gpu;
    try {
        gpu = receive_slot_memory(spec, hooks);
    } catch (const std::exception& e) {
        throw session_error(fmt::format("cannot place the RDMA receive slots in {}: {}", spec.memory, e.what()));
    }
    mesh.links = transport::mesh::make_rdma_data_links(open_rdma_links(mesh, spec, deadline, std::move(gpu)));
}

}  // namespace meshperf::daemon
