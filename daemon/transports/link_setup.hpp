#pragma once
/// What a transport's collective plug-in sends over the mesh's TCP sockets to set up its own
/// links (RDMA: queue pair descriptions; libfabric: endpoint addresses): a length-prefixed
/// JSON description each way, then a ready byte each way. Failures are session_errors that
/// name the set-up ("the RDMA set-up with rank 2 failed: ...").
#include "daemon/session/frame_channel.hpp"
#include "transport/socket.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::daemon {

/// One set-up over the sockets of a collective's mesh. `what` names it in errors ("RDMA").
class link_setup {
public:
    link_setup(std::string_view what, transport::clock::time_point deadline) : what_(what), deadline_(deadline) {}
    /// Sends `description` to the peer on `fd` (`who` names it: "rank 2").
    void send(int fd, const nlohmann::json& description, const std::string& who) const;
    /// Receives the peer's description (at most 64 KiB of JSON).
    nlohmann::json receive(int fd, const std::string& who) const;
    /// Sends a ready byte to every peer's socket, then waits for each one's.
    void exchange_ready(const std::vector<int>& fds, const std::vector<std::string>& who) const;

private:
    void send_bytes(int fd, const void* data, std::size_t n, const std::string& who) const;
    void recv_bytes(int fd, void* data, std::size_t n, const std::string& who) const;

    std::string what_;
    transport::clock::time_point deadline_;
};

}  // namespace meshperf::daemon
