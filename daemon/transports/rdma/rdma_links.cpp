// The RDMA side of a collective run: the QPs' descriptions carried over the mesh's TCP
// connections (rdma_links.hpp).
#include "daemon/transports/rdma/rdma_links.hpp"

#include "daemon/runtime/gpu_support.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/test_hooks/emulated_gpu.hpp"
#include "transport/mesh/rdma_data_links.hpp"
#include "transport/rdma/mesh_links.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::daemon {

namespace rdma = transport::rdma;
using transport::clock;

namespace {

/// transport::send_all, its failure said as the set-up's.
void send_bytes(int fd, const void* data, std::size_t n, clock::time_point deadline, const std::string& who) {
    try {
        transport::send_all(fd, data, n, deadline);
    } catch (const std::system_error& e) {
        throw session_error(fmt::format("the RDMA set-up with {} failed: {} (see its daemon's log)", who, e.what()));
    }
}

/// Exactly n bytes through transport::recv_some, a close or a failure said as the set-up's.
void recv_bytes(int fd, void* data, std::size_t n, clock::time_point deadline, const std::string& who) {
    auto* p = static_cast<char*>(data);
    while (n) {
        std::size_t got = 0;
        try {
            got = transport::recv_some(fd, p, n, deadline);
        } catch (const std::system_error& e) {
            throw session_error(fmt::format("the RDMA set-up with {} failed: {} (see its daemon's log)", who, e.what()));
        }
        if (got == 0) throw session_error(fmt::format("{} closed its connection during the RDMA set-up (see its daemon's log)", who));
        p += got;
        n -= got;
    }
}

void send_description(int fd, const rdma::endpoint_info& info, clock::time_point deadline, const std::string& who) {
    const auto text = nlohmann::json(info).dump();
    const std::uint32_t n = htonl(static_cast<std::uint32_t>(text.size()));
    send_bytes(fd, &n, sizeof n, deadline, who);
    send_bytes(fd, text.data(), text.size(), deadline, who);
}

rdma::endpoint_info receive_description(int fd, clock::time_point deadline, const std::string& who) {
    std::uint32_t n = 0;
    recv_bytes(fd, &n, sizeof n, deadline, who);
    n = ntohl(n);
    if (n == 0 || n > 64 * 1024) throw session_error(fmt::format("{} sent a malformed RDMA description ({} bytes)", who, n));
    std::string text(n, '\0');
    recv_bytes(fd, text.data(), n, deadline, who);
    try {
        return rdma::endpoint_info_from_json(nlohmann::json::parse(text));
    } catch (const std::exception& e) {
        throw session_error(fmt::format("{} sent a malformed RDMA description: {}", who, e.what()));
    }
}

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
    for (auto q : peers) send_description(mesh.fds[q].get(), links->local_info(q), deadline, name(q));
    for (auto q : peers) {
        const auto remote = receive_description(mesh.fds[q].get(), deadline, name(q));
        try {
            links->connect(q, remote);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("cannot connect the RDMA queue pair to {}: {}", name(q), e.what()));
        }
    }
    const char ready = 'R';
    for (auto q : peers) send_bytes(mesh.fds[q].get(), &ready, 1, deadline, name(q));
    for (auto q : peers) {
        char got = 0;
        recv_bytes(mesh.fds[q].get(), &got, 1, deadline, name(q));
        if (got != ready) throw session_error(fmt::format("{} sent {:#x} where the RDMA set-up expects ready", name(q), got));
    }
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
