#pragma once
/// TCP streams whose messages live in memory the socket cannot reach directly (GPU memory):
/// every message passes through host staging chunks, as a socket transport moves GPU
/// buffers (NCCL's socket transport does the same). The stream loops here mirror the host
/// loops of stream_loops.hpp; what differs is that each message is copied out of (send) or
/// into (receive) the device buffer chunk by chunk, the copies overlapping the socket.
///
/// Independent of CUDA: staged_stream_on<Stager, Memory> works with any Stager offering
/// gpu::basic_stager's interface (start_send, next_send_chunk, start_receive,
/// next_receive_chunk, commit_receive_chunk, finish_receive, abandon, chunk_bytes) and any
/// Memory offering `void* source()` and `void* destination()`. The daemon instantiates it
/// with gpu::staging and device buffers; the unit tests with a host memcpy engine.
///
/// Figures: a sender counts a chunk once the socket took it; a receiver counts bytes as the
/// socket delivers them, and its end time is taken after the last chunk reached device
/// memory. Every message carries the same bytes (the device buffer is sent as it is), so
/// --verify checks each message against the pattern from its first byte (message offset,
/// not stream offset), and at the end reads the device buffer back through the stager.
#include "transport/tcp/pattern.hpp"
#include "transport/tcp/socket_io.hpp"
#include "transport/tcp/stream_loops.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <utility>
#include <vector>

namespace meshperf::transport::tcp {

enum class stream_role : std::uint8_t;

/// One stream's messages in staged memory; the loops return loop codes like those of
/// stream_loops.hpp (loop_staging_failed: a copy failed, failure() says how). Used by the
/// stream's thread only.
class staged_stream {
public:
    virtual ~staged_stream() = default;
    /// send_loop with each message copied out of the device buffer.
    virtual int send(int fd, const send_plan& plan, const std::atomic<bool>& stop,
                     std::atomic<std::uint64_t>& sent) noexcept = 0;
    /// receive_loop with each message copied into the device buffer (plan.chunk is unused:
    /// the staging chunk is the unit).
    virtual int receive(int fd, const receive_plan& plan, receive_counters& counters) noexcept = 0;
    /// pinger::run: `count` round trips device -> peer -> device, RTT in ns into out (may be
    /// nullptr).
    virtual int ping(int fd, std::size_t count, double* out) noexcept = 0;
    /// Round trips completed by ping() so far.
    virtual std::uint64_t round_trips() const noexcept = 0;
    /// echo_loop: receives each message into device memory and sends it back from there.
    virtual int echo(int fd) noexcept = 0;
    /// The staging error in words after a loop returned loop_staging_failed.
    virtual const std::string& failure() const noexcept = 0;
};

/// Makes the staged stream for stream `stream` (its index in the point's stream order) of
/// one role of a point of `message_bytes`-byte messages (allocating its device buffers and
/// staging chunks), or throws std::system_error. An empty factory, or a null stream from it,
/// means host memory (over rails each rail's streams may be in a different memory).
using staged_stream_factory =
    std::function<std::unique_ptr<staged_stream>(stream_role role, std::size_t message_bytes, std::size_t stream)>;

/// staged_stream over a Stager and the Memory holding the device buffers.
template <typename Stager, typename Memory>
class staged_stream_on final : public staged_stream {
public:
    /// memory.source() holds one message (filled with make_pattern_buffer(size) bytes when
    /// verifying); memory.destination() has room for one. verify: check received bytes.
    /// busy_poll: spin on receives (latency).
    staged_stream_on(Memory memory, Stager stager, std::size_t size, bool verify, bool busy_poll)
        : memory_(std::move(memory)), stager_(std::move(stager)), size_(size), verify_(verify), busy_poll_(busy_poll) {
        if (verify_) pattern_ = make_pattern_buffer(size_);
    }

    int send(int fd, const send_plan& plan, const std::atomic<bool>& stop,
             std::atomic<std::uint64_t>& sent) noexcept override {
        std::uint64_t total = 0, count = 0;
        int rc = 0;
        try {
            while (!stop.load(std::memory_order_relaxed) && (plan.messages == 0 || count < plan.messages)) {
                stager_.start_send(memory_.source(), size_);
                for (auto c = stager_.next_send_chunk(); !c.empty(); c = stager_.next_send_chunk()) {
                    if ((rc = send_exact(fd, reinterpret_cast<const char*>(c.data()), c.size(), &stop)) != 0) break;
                    total += c.size();
                    sent.store(total, std::memory_order_relaxed);
                }
                if (rc != 0) {
                    stager_.abandon();
                    break;
                }
                ++count;
            }
        } catch (const std::exception& e) {
            rc = staging_failed(e);
        }
        finish_sending(fd);
        return rc == send_stopped ? loop_ok : rc;
    }

    int receive(int fd, const receive_plan& plan, receive_counters& counters) noexcept override {
        std::uint64_t messages = 0;
        receive_progress progress(counters, plan.warm_bytes);
        int rc = loop_ok;
        try {
            for (bool open = true; open;) {
                stager_.start_receive(memory_.destination(), size_);
                std::size_t offset = 0;  // within the message
                for (auto c = stager_.next_receive_chunk(); !c.empty(); c = stager_.next_receive_chunk()) {
                    std::size_t got = 0;
                    while (got < c.size()) {
                        const auto n = ::recv(fd, reinterpret_cast<char*>(c.data()) + got, c.size() - got, 0);
                        if (n > 0) {
                            got += static_cast<std::size_t>(n);
                            progress.add(static_cast<std::uint64_t>(n));
                            continue;
                        }
                        if (n < 0 && errno == EINTR) continue;
                        if (n < 0) rc = (errno == EAGAIN || errno == EWOULDBLOCK) ? ETIMEDOUT : errno;
                        open = false;  // n == 0: end of stream (the sender may stop part-way through a message)
                        break;
                    }
                    if (!open) break;
                    if (verify_ && std::memcmp(c.data(), pattern_.data() + offset, c.size()) != 0) {
                        rc = loop_verify_failed;
                        open = false;
                        break;
                    }
                    offset += c.size();
                    stager_.commit_receive_chunk();
                }
                if (open) {
                    stager_.finish_receive();
                    ++messages;
                } else {
                    stager_.abandon();
                }
            }
            progress.end();
            // Every message carries the same bytes, so after the last one (even a partial
            // one) the device buffer holds one whole message: read it back and compare.
            if (rc == loop_ok && verify_ && messages > 0 && !device_holds_pattern(memory_.destination()))
                rc = loop_verify_failed;
        } catch (const std::exception& e) {
            rc = staging_failed(e);
        }
        return rc;
    }

    int ping(int fd, std::size_t count, double* out) noexcept override {
        try {
            for (std::size_t i = 0; i < count; ++i) {
                const auto t0 = now_ns();
                int rc = send_message(fd, memory_.source());
                if (rc == 0) rc = receive_message(fd, memory_.destination());
                if (rc != 0) return rc;
                if (out) out[i] = static_cast<double>(now_ns() - t0);
                ++round_trips_;
            }
        } catch (const std::exception& e) {
            return staging_failed(e);
        }
        return loop_ok;
    }

    std::uint64_t round_trips() const noexcept override { return round_trips_; }

    int echo(int fd) noexcept override {
        try {
            while (true) {
                int rc = receive_message(fd, memory_.destination());
                if (rc == loop_peer_closed) return loop_ok;  // the pinger is done
                if (rc == 0) rc = send_message(fd, memory_.destination());
                if (rc != 0) return rc;
            }
        } catch (const std::exception& e) {
            return staging_failed(e);
        }
    }

    const std::string& failure() const noexcept override { return failure_; }

private:
    // One whole message from device memory to the socket. Returns 0 or a loop code.
    int send_message(int fd, void* device) {
        stager_.start_send(device, size_);
        for (auto c = stager_.next_send_chunk(); !c.empty(); c = stager_.next_send_chunk())
            if (int rc = send_exact(fd, reinterpret_cast<const char*>(c.data()), c.size())) {
                stager_.abandon();
                return rc;
            }
        return 0;
    }

    // One whole message from the socket into device memory, checked against the pattern
    // when verifying. Returns 0 or a loop code (loop_peer_closed: the stream ended).
    int receive_message(int fd, void* device) {
        stager_.start_receive(device, size_);
        std::size_t offset = 0;
        for (auto c = stager_.next_receive_chunk(); !c.empty(); c = stager_.next_receive_chunk()) {
            int rc = recv_exact(fd, reinterpret_cast<char*>(c.data()), c.size(), busy_poll_);
            if (rc == 0 && verify_ && std::memcmp(c.data(), pattern_.data() + offset, c.size()) != 0)
                rc = loop_verify_failed;
            if (rc != 0) {
                stager_.abandon();
                return rc;
            }
            offset += c.size();
            stager_.commit_receive_chunk();
        }
        stager_.finish_receive();
        return 0;
    }

    // Reads one message of device memory back through the staging chunks and compares it.
    bool device_holds_pattern(void* device) {
        stager_.start_send(device, size_);
        std::size_t offset = 0;
        bool same = true;
        for (auto c = stager_.next_send_chunk(); !c.empty(); c = stager_.next_send_chunk()) {
            same = same && std::memcmp(c.data(), pattern_.data() + offset, c.size()) == 0;
            offset += c.size();
        }
        return same;
    }

    int staging_failed(const std::exception& e) noexcept {
        try {
            failure_ = e.what();
        } catch (...) {
        }
        try {
            stager_.abandon();
        } catch (...) {
        }
        return loop_staging_failed;
    }

    Memory memory_;
    Stager stager_;
    std::size_t size_;
    bool verify_, busy_poll_;
    std::vector<char> pattern_;
    std::uint64_t round_trips_ = 0;
    std::string failure_;
};

}  // namespace meshperf::transport::tcp
