#pragma once
/// Exact sends and receives on a blocking data socket, shared by the host-memory loops
/// (stream_loops.cpp) and the GPU-staged loops (staged_stream.hpp). Nothing allocated or
/// thrown.
#include <atomic>
#include <cstddef>

namespace meshperf::transport::tcp {

/// send_exact's answer when `stop` was set while the path could take nothing.
inline constexpr int send_stopped = -100;

/// Sends exactly len bytes (blocking; SO_SNDTIMEO wakes it every send_wake_ms while the
/// socket buffer stays full). Returns 0, send_stopped when `stop` (may be null) is set while
/// blocked, ETIMEDOUT after data_stream_timeout_s without progress, or an errno value.
int send_exact(int fd, const char* p, std::size_t len, const std::atomic<bool>* stop = nullptr) noexcept;

/// Receives exactly len bytes; spins with MSG_DONTWAIT when busy_poll. Returns 0,
/// loop_peer_closed at end of stream before len bytes, ETIMEDOUT when the peer stays silent
/// for data_stream_timeout_s, or an errno value.
int recv_exact(int fd, char* p, std::size_t len, bool busy_poll) noexcept;

}  // namespace meshperf::transport::tcp
