#pragma once
/// The TCP measurement loops. Each runs on one dedicated thread over one connected blocking
/// socket: a plain loop with nothing allocated, logged, thrown or virtually dispatched per
/// message. Every buffer is allocated by the caller before the loop starts. Loops report
/// failure through a return code (an errno value, or one of the codes below), never by
/// throwing.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshperf::transport::tcp {

/// Seconds a data stream may stay silent (receiving) or make no progress (sending) before
/// its loop gives up with ETIMEDOUT: a frozen peer whose kernel still acknowledges.
inline constexpr int data_stream_timeout_s = 10;
/// Milliseconds sent data may stay unacknowledged before the kernel aborts the connection
/// (TCP_USER_TIMEOUT; also ends keepalive probing of an idle receiver): a cut link or a
/// vanished host ends a point in about this long. A working path, however slow, acknowledges
/// within a few round trips.
inline constexpr unsigned data_stream_user_timeout_ms = 5000;
/// A sender blocked on a full socket buffer wakes this often (SO_SNDTIMEO) to look at its
/// stop flag, so stopping a point never waits for a slow or dead path to drain a message.
inline constexpr int send_wake_ms = 200;

/// After a sending stream's last message, how long it waits for the peer to acknowledge
/// what its socket still holds (finish_sending). With the receivers' close_bound_ms this
/// bounds how long a stopped point takes to end on any path, a lossy one included.
inline constexpr int drain_bound_ms = 800;
/// How long after a point's stop its receiving streams wait for the end of stream before
/// they shut their sockets and end cleanly (point_side::close_overdue): bytes still queued
/// on a slow path are not waited for. core::point_close_bound_s is the bound users read.
inline constexpr int close_bound_ms = 1000;

/// Ends a sending stream: shuts the write side down, then waits (at most drain_bound_ms,
/// never longer) until the peer has acknowledged everything queued in the socket.
void finish_sending(int fd) noexcept;

/// Sets the data-stream timeouts (SO_RCVTIMEO, SO_SNDTIMEO, TCP_USER_TIMEOUT, keepalive),
/// TCP_NODELAY (latency) and socket buffers (window, if non-zero) on a connected data
/// socket. Throws std::system_error naming the option.
void prepare_data_socket(int fd, bool nodelay, std::uint64_t window_bytes);

/// Makes a dead path end a connection in about `user_timeout_ms` even while nothing is being
/// sent: TCP_USER_TIMEOUT plus keepalive probes after 1 s of silence, every second. A live
/// peer's kernel answers the probes, so a quiet connection is never cut. Throws
/// std::system_error naming the option.
void set_dead_path_timeout(int fd, unsigned user_timeout_ms);

/// Loop outcome codes beyond errno values.
inline constexpr int loop_ok = 0;
inline constexpr int loop_verify_failed = -1;   ///< a received byte did not match the pattern
inline constexpr int loop_peer_closed = -2;     ///< the stream ended before the loop expected
inline constexpr int loop_staging_failed = -3;  ///< a copy between GPU memory and its staging chunks failed

/// Describes a failure code in words ("connection reset by peer", "data corrupted").
const char* describe_loop_error(int code);

/// Monotonic nanoseconds (steady_clock), the time base of every loop.
std::int64_t now_ns() noexcept;

/// Counters one receiving stream publishes; written by its thread only, read by a monitor.
struct alignas(64) receive_counters {
    std::atomic<std::uint64_t> bytes{0};          ///< total bytes received so far
    std::atomic<std::int64_t> measure_begin_ns{0}; ///< fixed-count mode: when the warm-up bytes were all in
    std::atomic<std::int64_t> end_ns{0};           ///< when the stream ended (EOF seen)
};

/// A receiving stream's running count, shared by the host and the staged receive loops:
/// publishes the bytes received and, in fixed-count mode, when the warm-up bytes were all
/// in (at once when there is no warm-up).
class receive_progress {
public:
    receive_progress(receive_counters& counters, std::uint64_t warm_bytes) noexcept
        : counters_(counters), warm_bytes_(warm_bytes) {
        if (warm_bytes_ == 0) counters_.measure_begin_ns.store(now_ns(), std::memory_order_relaxed);
    }
    /// Bytes received so far.
    std::uint64_t total() const noexcept { return total_; }
    /// Counts n more bytes received.
    void add(std::uint64_t n) noexcept {
        const bool warming = total_ < warm_bytes_;
        total_ += n;
        counters_.bytes.store(total_, std::memory_order_relaxed);
        if (warming && total_ >= warm_bytes_) counters_.measure_begin_ns.store(now_ns(), std::memory_order_relaxed);
    }
    /// The stream has ended (end of stream seen, or its last bytes in place).
    void end() noexcept { counters_.end_ns.store(now_ns(), std::memory_order_relaxed); }

private:
    receive_counters& counters_;
    std::uint64_t warm_bytes_;
    std::uint64_t total_ = 0;
};

/// What a sending stream does.
struct send_plan {
    std::size_t size = 0;                  ///< message size in bytes
    std::uint64_t messages = 0;            ///< messages to send; 0 = until stop is set
};

/// Sends size-byte messages until `stop` is set or plan.messages are sent, then ends with
/// finish_sending (write side shut, queued bytes acknowledged or drain_bound_ms passed). Every message carries the same bytes, the pattern from its start (as an
/// application sending one buffer again and again; a GPU buffer can be sent no other way). A message the path cannot take when `stop` is set is abandoned (the
/// receiver counts bytes, not messages). `pattern` comes from make_pattern_buffer(size).
/// Returns loop_ok or an errno value (ETIMEDOUT: no progress for data_stream_timeout_s, or
/// the path is dead). `sent` counts bytes (relaxed; for the sender's own view).
int send_loop(int fd, const send_plan& plan, const std::vector<char>& pattern, const std::atomic<bool>& stop,
              std::atomic<std::uint64_t>& sent) noexcept;

/// What a receiving stream does.
struct receive_plan {
    std::size_t chunk = 0;                 ///< receive buffer size (>= 1)
    bool verify = false;                   ///< check every byte against the pattern
    std::uint64_t warm_bytes = 0;          ///< fixed-count mode: bytes before measure_begin_ns is taken
    std::uint64_t message_bytes = 1;       ///< verify: the sender's message size (the pattern restarts with each message)
};

/// Receives until end of stream, publishing counters. `buffer` holds at least plan.chunk
/// bytes; `pattern` comes from make_pattern_buffer(plan.chunk) when verifying. Returns
/// loop_ok, loop_verify_failed or an errno value.
int receive_loop(int fd, const receive_plan& plan, std::vector<char>& buffer, const std::vector<char>& pattern,
                 receive_counters& counters) noexcept;

/// Ping side of a latency point, owning its buffers (allocated at construction).
class pinger {
public:
    /// size: message size; verify: check the echoed bytes; busy_poll: spin on non-blocking
    /// receives instead of sleeping in the kernel.
    pinger(int fd, std::size_t size, bool verify, bool busy_poll);
    /// Runs `count` round trips, storing each RTT in ns into out[0..count) (out may be
    /// nullptr for warm-up). Returns loop_ok or a failure code.
    int run(std::size_t count, double* out) noexcept;
    std::uint64_t round_trips() const { return round_trips_; }
    /// Test hook (MESHPERF_TEST_CORRUPT_TCP): flips one byte in the middle of the message
    /// this pinger sends, so the echo side's --verify must fail the point. Before run().
    void corrupt_sent_for_test() noexcept { if (size_ > 0) pattern_[size_ / 2] ^= 0x5a; }

private:
    int fd_;
    std::size_t size_;
    bool verify_, busy_poll_;
    std::vector<char> pattern_, rx_;
    std::uint64_t round_trips_ = 0;
};

/// Echo side of a latency point: receives size-byte messages into rx (>= size bytes) and
/// sends each back until end of stream. `pattern` comes from make_pattern_buffer(size) when
/// verifying. Returns loop_ok (clean end), loop_verify_failed or an errno value.
/// `verified` (may be null) counts the bytes checked against the pattern and found equal,
/// so a point can say what was verified rather than what was asked for.
int echo_loop(int fd, std::size_t size, bool verify, bool busy_poll, std::vector<char>& rx,
              const std::vector<char>& pattern, std::uint64_t* verified = nullptr) noexcept;

}  // namespace meshperf::transport::tcp
