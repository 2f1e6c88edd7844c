#include "transport/ofi/mesh_links.hpp"

#include <algorithm>

namespace meshperf::transport::ofi {
namespace {

endpoint_options mesh_options(const std::string& provider, const std::string& local_ip, std::size_t ranks) {
    endpoint_options o;
    o.provider = provider;
    o.local_ip = local_ip;
    o.kind = message_kind::tagged;
    o.max_slots = std::max<std::size_t>(64, 8 * ranks);  // the CQ's depth: every chunk in flight, both ways, all peers
    o.max_message_bytes = 1;  // the endpoint's own pool is not used: steps run over the size's buffers
    o.peers = ranks;
    o.ordered = true;
    o.wait_fd = true;  // ranks that share CPUs sleep on it between completions
    return o;
}

}  // namespace

mesh_links::mesh_links(const std::string& provider, const std::string& local_ip, std::size_t ranks)
    : ep_(mesh_options(provider, local_ip, ranks)), peers_(ranks, no_peer), tags_(ranks, 0) {}

void mesh_links::connect(unsigned peer, const std::string& address, std::uint64_t tag_to_peer) {
    if (peer >= peers_.size()) return;
    peers_[peer] = ep_.add_peer(address);
    tags_[peer] = tag_to_peer;
}

}  // namespace meshperf::transport::ofi
