#pragma once
/// One rank's data connections in a collective run, as the step runners use them: one plain
/// TCP socket per peer rank it exchanges data or barrier tokens with, index = rank (an empty
/// socket where it has none); and, where the run's transport has links of its own (RDMA: a
/// connected queue pair per such peer), those links, which then carry the data and the
/// barrier while the sockets only tell when a peer has gone. The daemon opens the sockets
/// (daemon/collective/mesh.cpp) and the transport's collective plug-in its links
/// (daemon/transports/).
#include "core/collective/dtype.hpp"
#include "transport/link_counters_reader.hpp"
#include "transport/socket.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace meshperf::transport::mesh {

class step_runner;
class device_memory;
struct connections;

/// A transport's own links between the ranks, beside the sockets. Made by the transport's
/// collective plug-in once per run; the engine sees only this interface.
class data_links {
public:
    virtual ~data_links() = default;
    /// The step runner of one size over these links. Host memory: `buffers` are the size's
    /// send and receive buffers. Device memory: `device` holds the size's buffers and
    /// `buffers` is empty. Throws step_setup_error (transport/step_io.hpp) when a buffer
    /// cannot be registered or the links' memory does not match.
    virtual std::unique_ptr<step_runner> open_step_runner(connections& mesh, const std::atomic<bool>& cancel,
                                                          core::dtype element,
                                                          const std::vector<std::span<std::byte>>& buffers,
                                                          device_memory* device) = 0;
    /// How the links hold the run's memory, for its result: "" for host memory, else e.g.
    /// "GPUDirect RDMA, cuda:0 registered with rxe0 port 1 by peermem".
    virtual std::string memory_note() const = 0;
    /// Points `target` at the device and port the links use, so a size's port counters are
    /// read with its NIC's (docs/counters.md).
    virtual void count_port(link_counter_target& target) const = 0;
};

struct connections {
    std::vector<socket_fd> fds;
    /// SO_RCVLOWAT as last set on each socket (index = rank; missing: the kernel's 1).
    /// It stays on the socket from one size to the next, so it is kept with it.
    std::vector<int> rcvlowat;
    std::shared_ptr<data_links> links;  ///< null: the data moves over the sockets
    /// Releases the transport's links and closes the sockets: the other ranks see them close at once.
    void close() {
        links.reset();
        fds.clear();
    }
};

}  // namespace meshperf::transport::mesh
