// The RDMA side of a collective run: the QPs' descriptions carried over the mesh's TCP
// connections, and the size's step runner (rdma_links.hpp).
#include "daemon/collective/rdma_links.hpp"

#include "daemon/collective/step_fault.hpp"
#include "daemon/session/frame_channel.hpp"
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

}  // namespace

std::shared_ptr<rdma::mesh_links> connect_rdma_links(const transport::mesh::connections& mesh, const core::collective_spec& spec,
                                                     clock::time_point deadline,
                                                     std::shared_ptr<const rdma::device_memory> gpu) {
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

std::string rdma_memory_note(const rdma::mesh_links& links) { return links.memory_note(); }

void count_rdma_port(const rdma::mesh_links& links, transport::link_counter_target& target) {
    target.rdma_device = links.ep().local_info().device;
    target.rdma_port = links.ep().local_info().port;
}

std::unique_ptr<transport::mesh::step_runner> open_rdma_step_runner(transport::mesh::connections& mesh,
                                                                    const std::atomic<bool>& cancel, core::dtype element,
                                                                    const std::vector<std::span<std::byte>>& buffers,
                                                                    transport::mesh::device_memory* device) {
    try {
        return transport::mesh::make_rdma_step_runner(mesh, cancel, element, buffers, device);
    } catch (const transport::mesh::step_setup_error& e) {
        throw collective_fault(e.what(), std::nullopt);
    }
}

}  // namespace meshperf::daemon
