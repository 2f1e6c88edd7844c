#pragma once
/// One daemon's side of a TCP point: the connected data streams, one thread per stream
/// running its loop, and the counters a controller snapshots. Knows nothing of sessions:
/// the peer session hands it sockets and roles and reads its counters.
#include "core/run_spec.hpp"
#include "transport/socket.hpp"
#include "transport/stream_thread.hpp"
#include "core/latency_runner.hpp"
#include "transport/tcp/staged_stream.hpp"
#include "transport/tcp/stream_loops.hpp"
#include "transport/tcp/tcp_counters.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace meshperf::transport::tcp {

/// What one stream does in a point.
enum class stream_role : std::uint8_t { send, receive, ping, echo };

/// Roles of the initiator's and the peer's streams for a test: latency is one ping/echo
/// stream; bandwidth is `streams` send/receive streams (reversed with `reverse`); bidir is
/// `streams` each way, initiator->peer first.
std::vector<stream_role> initiator_roles(core::test_kind, std::uint32_t streams, bool reverse);
/// The peer's role for each stream, the mirror of the initiator's.
stream_role mirror(stream_role);

/// Messages sent before the measured window in fixed-count mode (about 8 MiB, at least 8).
std::uint64_t warm_messages(std::uint64_t size_bytes);

class point_side {
public:
    /// Takes ownership of the connected data sockets (one per role) and allocates every
    /// buffer. `byte_cap` (0: none) bounds the bytes this side sends per direction in an
    /// adaptive or duration point: each sending stream stops after its share (at least one
    /// message), and a ping stream ends its point after the batch that reaches it. Fixed
    /// counts are checked against the limit before the run starts (core::validate).
    /// `staged` (empty: host memory) makes each stream's GPU memory and staging chunks: its
    /// messages then come from and go to that memory; a stream it makes none for (null) is
    /// in host memory. Throws std::system_error when a socket
    /// option cannot be set or staged memory cannot be made.
    point_side(const core::run_spec& spec, core::test_kind test, std::uint64_t size, std::vector<socket_fd> fds,
               std::vector<stream_role> roles, std::uint64_t byte_cap = 0, const staged_stream_factory& staged = {});
    /// Stops and joins the threads.
    ~point_side();
    point_side(const point_side&) = delete;
    point_side& operator=(const point_side&) = delete;

    /// CPUs the stream threads are pinned to, round-robin (empty: left to the scheduler).
    /// Call before start(); the session passes the CPUs chosen once for the run.
    void pin_to(std::vector<int> cpus) { cpus_ = std::move(cpus); }
    /// Starts one thread per stream, pinned as pin_to() said.
    void start();
    /// Tells sending streams to stop (within one SO_SNDTIMEO slice, part-way through a
    /// message if need be; a ping stream ends after its current batch), and starts the
    /// close bound of the receiving streams (close_overdue).
    void stop();
    /// Once close_bound_ms has passed since stop(), shuts down the read side of receiving
    /// streams still waiting for their end of stream whose path delivered bytes since the
    /// stop, so they end cleanly now with the bytes they have: a slow or lossy path's queued
    /// bytes are not waited for. A receiver that took nothing since the stop (a cut or frozen
    /// path) is left to its data-stream timeout, a failure. Controller thread; cheap.
    void close_overdue();
    /// Waits for every thread; they end at end of stream, on error, or after the data
    /// timeout when the peer falls silent. After stop(), receiving streams are closed at the
    /// close bound (close_overdue), so a stopped point joins within about close_bound_ms.
    void join();
    /// Shuts every socket down (both directions) so that blocked threads return now; the
    /// point is over and fails. Any thread; call join() afterwards.
    void abort();

    /// True when a sending stream sent its whole byte-cap share, or the ping stream reached
    /// the cap: the point ended at the byte limit rather than by time or precision.
    bool byte_cap_reached() const { return cap_reached_.load(); }
    /// Bytes this side's sending streams have sent so far, all together.
    std::uint64_t sent_bytes() const;
    /// Monotonic ns when the last receiving stream saw its end of stream (0: none did).
    std::int64_t last_receive_end_ns() const;

    /// True once every stream thread has ended.
    bool finished() const { return finished_.load() == streams_.size(); }
    /// Cumulative bytes received so far by each receiving stream, in role order.
    std::vector<std::uint64_t> received_bytes() const;
    /// Number of receiving streams.
    std::size_t receivers() const;

    /// Reads TCP_INFO of every sending stream as the measured window is about to open (a
    /// later call replaces the reading), and as it has closed. Controller thread only; a
    /// few system calls per stream, never inside a stream's loop.
    void read_tcp_counters_before_window();
    /// Each tick inside the window: one more reading per sending stream (RTT, cwnd, delivery
    /// rate, lost, reordering over the window's intervals).
    void read_tcp_counters_in_window();
    void read_tcp_counters_after_window();
    /// The sending streams' TCP counters from those readings, all streams together.
    /// Empty when this side has no sending stream or some reading failed.
    std::optional<core::tcp_point_counters> sent_tcp_counters() const;

    // After join():
    /// Empty when every stream ended cleanly; else the first failure in words.
    std::string error() const;
    /// The stream error() describes, by its index in role order; empty when none failed.
    std::optional<std::size_t> failed_stream() const;
    /// Every stream that failed, by index in role order (failed_stream() is the first).
    std::vector<std::size_t> failed_streams() const;
    /// Stream `i`'s failure in words (empty when it ended cleanly or was stopped).
    std::string stream_error(std::size_t i) const;
    bool verify_failed() const;
    /// Bytes this side's streams checked against the pattern and found equal (--verify):
    /// what receivers took in, what an echo side echoed, what a pinger got back. 0 when
    /// nothing was checked here (no --verify, or this side only sends). A staged echo side
    /// counts none (its pinger checks every echo).
    std::uint64_t verified_bytes() const;
    /// Test hook (MESHPERF_TEST_CORRUPT_TCP, daemon/test_hooks/): every message this side's
    /// host-memory send and ping streams send carries one flipped byte, so the receiving
    /// end's --verify must fail the point. Call before start().
    void corrupt_sent_for_test() { corrupt_sent_ = true; }
    /// CPU seconds the stream threads used (user + system).
    double cpu_seconds() const;
    /// Wall seconds from start() to the end of the last thread.
    double wall_seconds() const;
    /// Fixed-count mode, per receiving stream: bytes after the warm-up, begin and end (ns).
    std::vector<std::uint64_t> measured_bytes() const;
    std::vector<std::int64_t> begin_ns() const;
    std::vector<std::int64_t> end_ns() const;
    /// Where each stream's thread ran, in role order.
    std::vector<thread_cpu_record> thread_cpus() const;
    /// Latency: the ping stream's outcome (valid when this side had the ping role).
    const core::latency_outcome& latency() const { return latency_; }

private:
    struct stream;
    void run_stream(stream& s, int cpu);
    send_plan sender_plan(bool fixed) const;
    void note_byte_cap(const stream& s);  // a sender that sent its whole share ended at the byte cap
    void end_at_close_bound(stream& s);   // a receiver closed at the bound ended cleanly
    void run_host_stream(stream& s, bool fixed);
    void run_staged_stream(stream& s, bool fixed);
    // The ping role: latency batches through `batch`, stopping at the byte cap.
    void run_pings(stream& s, const std::function<int(std::size_t, double*)>& batch,
                   const std::function<std::uint64_t()>& round_trips);

    core::run_spec spec_;
    core::test_kind test_;
    std::uint64_t size_;
    std::vector<std::unique_ptr<stream>> streams_;
    std::vector<std::thread> threads_;
    std::vector<int> cpus_;
    std::atomic<bool> stop_{false};
    std::atomic<std::int64_t> stop_ns_{0};  // when stop() was first called (0: not yet)
    core::latency_outcome latency_;
    std::vector<double> samples_;
    std::int64_t start_ns_ = 0;
    std::atomic<std::int64_t> last_end_ns_{0};
    std::atomic<std::size_t> finished_{0};
    std::atomic<bool> cap_reached_{false};
    std::uint64_t cap_messages_ = 0;  // per sending stream (or round trips); 0: no cap
    bool joined_ = true;
    bool corrupt_sent_ = false;  // test hook: see corrupt_sent_for_test()
};

}  // namespace meshperf::transport::tcp
