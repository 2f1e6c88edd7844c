#include "transport/tcp/stream_loops.hpp"

#include "transport/tcp/pattern.hpp"
#include "transport/tcp/socket_io.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <system_error>
#include "transport/socket.hpp"

namespace meshperf::transport::tcp {
namespace {

constexpr std::int64_t data_timeout_ns = std::int64_t{data_stream_timeout_s} * 1'000'000'000;

}  // namespace

int send_exact(int fd, const char* p, std::size_t len, const std::atomic<bool>* stop) noexcept {
    std::int64_t stalled_since = 0;
    while (len > 0) {
        const auto n = ::send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= static_cast<std::size_t>(n);
            stalled_since = 0;
            // A slow or lossy path takes a message a few segments per SO_SNDTIMEO slice: look
            // at the stop flag after each slice too, so a stop never waits for a message.
            if (len > 0 && stop && stop->load(std::memory_order_relaxed)) return send_stopped;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {  // SO_SNDTIMEO slice expired
            if (stop && stop->load(std::memory_order_relaxed)) return send_stopped;
            const auto now = now_ns();
            if (stalled_since == 0) stalled_since = now - std::int64_t{send_wake_ms} * 1'000'000;
            else if (now - stalled_since > data_timeout_ns) return ETIMEDOUT;
            continue;
        }
        return n < 0 ? errno : EPIPE;
    }
    return 0;
}

int recv_exact(int fd, char* p, std::size_t len, bool busy_poll) noexcept {
    const int flags = busy_poll ? MSG_DONTWAIT : 0;
    std::uint64_t spins = 0;
    std::int64_t deadline = 0;
    while (len > 0) {
        const auto n = ::recv(fd, p, len, flags);
        if (n > 0) { p += n; len -= static_cast<std::size_t>(n); continue; }
        if (n == 0) return loop_peer_closed;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!busy_poll) return ETIMEDOUT;  // SO_RCVTIMEO expired
            // Spinning: look at the clock only now and then, so a silent peer still times out.
            if ((++spins & 0xffff) == 0) {
                const auto now = now_ns();
                if (deadline == 0) deadline = now + data_timeout_ns;
                else if (now > deadline) return ETIMEDOUT;
            }
            continue;
        }
        return errno;
    }
    return 0;
}

const char* describe_loop_error(int code) {
    switch (code) {
        case loop_ok: return "ok";
        case loop_verify_failed: return "received data did not match the pattern (data corrupted)";
        case loop_peer_closed: return "the peer closed the stream early";
        case loop_staging_failed: return "a GPU staging copy failed";
        default: return std::strerror(code);
    }
}

void set_dead_path_timeout(int fd, unsigned user_timeout_ms) {
    const int on = 1, idle_s = 1, interval_s = 1, probes = 5;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms) != 0)
        throw std::system_error(errno, std::generic_category(), "setsockopt(TCP_USER_TIMEOUT)");
    if (::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) != 0 ||
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s) != 0 ||
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s) != 0 ||
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) != 0)
        throw std::system_error(errno, std::generic_category(), "setsockopt(SO_KEEPALIVE/TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT)");
}

void prepare_data_socket(int fd, bool nodelay, std::uint64_t window_bytes) {
    const timeval rcv{data_stream_timeout_s, 0};
    const timeval snd{0, send_wake_ms * 1000};
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd) != 0)
        throw std::system_error(errno, std::generic_category(), "setsockopt(SO_RCVTIMEO/SO_SNDTIMEO)");
    set_dead_path_timeout(fd, data_stream_user_timeout_ms);
    set_blocking(fd, true);
    set_nodelay(fd, nodelay);
    if (window_bytes) set_buffer_sizes(fd, window_bytes);
}

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int send_loop(int fd, const send_plan& plan, const std::vector<char>& pattern, const std::atomic<bool>& stop,
              std::atomic<std::uint64_t>& sent) noexcept {
    std::uint64_t offset = 0, count = 0;
    int rc = 0;
    while (!stop.load(std::memory_order_relaxed) && (plan.messages == 0 || count < plan.messages)) {
        if ((rc = send_exact(fd, pattern.data(), plan.size, &stop)) != 0) break;
        offset += plan.size;
        ++count;
        sent.store(offset, std::memory_order_relaxed);
    }
    finish_sending(fd);
    return rc == send_stopped ? loop_ok : rc;
}

void finish_sending(int fd) noexcept {
    ::shutdown(fd, SHUT_WR);
    // Wait, a bounded time, until the peer has acknowledged what the socket still holds:
    // the bytes the point moved then all moved while this side's TCP counters can see them
    // (retransmits of a lossy path happen here), and a sender's end means its data is in.
    const auto give_up = now_ns() + std::int64_t{drain_bound_ms} * 1'000'000;
    while (true) {
        int queued = 0;
        if (::ioctl(fd, SIOCOUTQ, &queued) != 0 || queued <= 0) return;
        if (now_ns() >= give_up) return;
        const timespec pause{0, 2'000'000};
        ::nanosleep(&pause, nullptr);
    }
}

int receive_loop(int fd, const receive_plan& plan, std::vector<char>& buffer, const std::vector<char>& pattern,
                 receive_counters& counters) noexcept {
    receive_progress progress(counters, plan.warm_bytes);
    while (true) {
        const auto n = ::recv(fd, buffer.data(), plan.chunk, 0);
        if (n > 0) {
            if (plan.verify && !matches_message_pattern(pattern, plan.message_bytes, progress.total(), buffer.data(),
                                                        static_cast<std::size_t>(n)))
                return loop_verify_failed;
            progress.add(static_cast<std::uint64_t>(n));
            continue;
        }
        if (n == 0) break;
        if (errno == EINTR) continue;
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? ETIMEDOUT : errno;
    }
    progress.end();
    return loop_ok;
}

pinger::pinger(int fd, std::size_t size, bool verify, bool busy_poll)
    : fd_(fd), size_(size), verify_(verify), busy_poll_(busy_poll), pattern_(make_pattern_buffer(size)), rx_(size) {}

int pinger::run(std::size_t count, double* out) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        const char* msg = pattern_.data();
        const auto t0 = std::chrono::steady_clock::now();
        if (int rc = send_exact(fd_, msg, size_)) return rc;
        if (int rc = recv_exact(fd_, rx_.data(), size_, busy_poll_)) return rc;
        const auto t1 = std::chrono::steady_clock::now();
        if (verify_ && std::memcmp(msg, rx_.data(), size_) != 0) return loop_verify_failed;
        if (out) out[i] = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        ++round_trips_;
    }
    return loop_ok;
}

int echo_loop(int fd, std::size_t size, bool verify, bool busy_poll, std::vector<char>& rx,
              const std::vector<char>& pattern, std::uint64_t* verified) noexcept {
    while (true) {
        int rc = recv_exact(fd, rx.data(), size, busy_poll);
        if (rc == loop_peer_closed) return loop_ok;  // the pinger is done
        if (rc) return rc;
        if (verify) {
            if (!matches_pattern(pattern, 0, rx.data(), size)) return loop_verify_failed;
            if (verified) *verified += size;
        }
        if ((rc = send_exact(fd, rx.data(), size))) return rc;
    }
}

}  // namespace meshperf::transport::tcp
