#pragma once
/// One rank's libfabric endpoint in a collective run: a single reliable-datagram endpoint
/// whose address vector holds every peer rank it exchanges data with (tagged messages,
/// matched in order per sender: FI_ORDER_SAS). The daemon's collective plug-in
/// (daemon/transports/ofi/ofi_links.cpp) swaps the addresses over the mesh's TCP sockets.
#include "transport/ofi/endpoint.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace meshperf::transport::ofi {

class mesh_links {
public:
    /// Opens the endpoint over `provider`, bound to `local_ip`, for `ranks` ranks. Throws ofi_error.
    mesh_links(const std::string& provider, const std::string& local_ip, std::size_t ranks);
    const std::string& address() const { return ep_.address(); }
    /// Inserts rank `peer`'s address, and the tag it asked this rank's messages to it to carry
    /// (its index of this rank: it receives by tag = sender, and this rank may not know its
    /// own rank). Throws ofi_error.
    void connect(unsigned peer, const std::string& address, std::uint64_t tag_to_peer);
    bool has(unsigned peer) const noexcept { return peer < peers_.size() && peers_[peer] != no_peer; }
    std::uint64_t handle(unsigned peer) const noexcept { return peers_[peer]; }
    /// The tag of this rank's messages to `peer`; it receives from `peer` by tag `peer`.
    std::uint64_t tag_to(unsigned peer) const noexcept { return tags_[peer]; }
    endpoint& ep() noexcept { return ep_; }
    /// Set once a step ended with operations it could not retire: the endpoint is unusable.
    bool broken = false;

private:
    static constexpr std::uint64_t no_peer = ~0ull;
    endpoint ep_;
    std::vector<std::uint64_t> peers_, tags_;
};

}  // namespace meshperf::transport::ofi
