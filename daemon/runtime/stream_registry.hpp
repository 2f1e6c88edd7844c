#pragma once
/// Hands data-stream sockets from the HTTP thread (which accepted and upgraded them) to the
/// session thread that waits for them. Only a session that completed its handshake opens a
/// token, so no stream is accepted for anyone else.
#include "transport/socket.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace meshperf::daemon {

class stream_registry {
public:
    /// Session thread: expects `count` streams for `token`.
    void open(const std::string& token, std::size_t count);
    /// HTTP thread: true when `token` expects a stream with this index that has not arrived.
    bool expects(const std::string& token, std::size_t index) const;
    /// HTTP thread: hands over stream `index`. Returns false (and closes fd) if unexpected.
    bool deliver(const std::string& token, std::size_t index, transport::socket_fd fd);
    /// Session thread: waits for all streams of `token` and returns them in index order,
    /// closing the token. Throws std::runtime_error naming how many arrived on timeout.
    std::vector<transport::socket_fd> wait(const std::string& token, transport::clock::time_point deadline);
    /// Forgets a token and closes any streams that arrived for it.
    void close(const std::string& token);

private:
    struct slot {
        std::vector<transport::socket_fd> fds;
        std::size_t arrived = 0;
    };
    mutable std::mutex m_;
    std::condition_variable cv_;
    std::map<std::string, slot> slots_;
};

}  // namespace meshperf::daemon
