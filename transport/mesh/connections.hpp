#pragma once
/// One rank's data connections in a collective run, as the step runners use them: one plain
/// TCP socket per peer rank it exchanges data or barrier tokens with, index = rank (an empty
/// socket where it has none); over RDMA also a connected queue pair per such peer
/// (rdma::mesh_links, transport/rdma/mesh_links.hpp), which then carries the data and the
/// barrier while the sockets only tell when a peer has gone. The daemon opens and connects
/// them (daemon/collective/mesh.cpp).
#include "transport/socket.hpp"

#include <memory>
#include <vector>

namespace meshperf::transport::rdma {
class mesh_links;  // complete only where RDMA is built
}

namespace meshperf::transport::mesh {

struct connections {
    std::vector<socket_fd> fds;
    /// SO_RCVLOWAT as last set on each socket (index = rank; missing: the kernel's 1).
    /// It stays on the socket from one size to the next, so it is kept with it.
    std::vector<int> rcvlowat;
    std::shared_ptr<rdma::mesh_links> rdma;  ///< null: the data moves over the sockets
    /// Releases the queue pairs and closes the sockets: the other ranks see them close at once.
    void close() {
        rdma.reset();
        fds.clear();
    }
};

}  // namespace meshperf::transport::mesh
