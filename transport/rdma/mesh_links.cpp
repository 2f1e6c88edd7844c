#include "transport/rdma/mesh_links.hpp"

#include <fmt/format.h>

namespace meshperf::transport::rdma {

mesh_links::mesh_links(const mesh_link_options& options, const std::vector<unsigned>& peers, std::size_t ranks) {
    endpoint_options o;
    o.local_ip = options.local_ip;
    o.device = options.device;
    o.port = options.port;
    o.gid_index = options.gid_index;
    o.qps = static_cast<std::uint32_t>(peers.size());
    o.max_message_bytes = mesh_slot_count * mesh_slot_bytes;
    o.tx_depth = mesh_send_depth;
    o.rx_depth = mesh_recv_depth;
    o.inline_bytes = 64;
    o.completion_events = true;
    o.gpu_memory = options.gpu;
    ep_ = std::make_unique<endpoint>(o);
    links_.resize(ranks);
    for (std::size_t i = 0; i < peers.size(); ++i) links_[peers[i]] = mesh_link{i};
}

endpoint_info mesh_links::local_info(unsigned peer) const { return ep_->qp_info(links_.at(peer)->slot); }

void mesh_links::connect(unsigned peer, const endpoint_info& remote) {
    const auto i = links_.at(peer)->slot;
    ep_->connect_qp(i, remote);
    ep_->slot(i).top_up_receives();
}

std::string mesh_links::memory_note() const {
    if (!ep_ || !ep_->qp_count()) return {};
    const auto& slot = ep_->slot(0);
    if (slot.host_memory() || !slot.registration) return {};
    return fmt::format("GPUDirect RDMA, {} registered with {} by {}", ep_->options().gpu_memory->name(), ep_->where(),
                       core::to_string(slot.registration->path));
}

}  // namespace meshperf::transport::rdma
