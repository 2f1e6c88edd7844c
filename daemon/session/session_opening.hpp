#pragma once
/// Opening a peer session (the /v1/session upgrade), one attempt at a time: shared by the
/// pairwise initiator (daemon/session/initiator.cpp), which retries a busy peer while it
/// gives its own gate back, and the collective coordinator, which opens one per rank.
#include "daemon/service/daemon_context.hpp"
#include "daemon/session/frame_channel.hpp"
#include "transport/socket.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

namespace meshperf::daemon {

/// One attempt: the session, or the peer's refusal.
struct session_attempt {
    std::optional<frame_channel> channel;
    int status = 0;      ///< the refusal's HTTP status (503: the peer is measuring)
    std::string why;     ///< the refusal's sentence ("error" of its body), possibly empty
    std::string reason;  ///< the refusal's HTTP reason phrase
    /// True when the peer is busy measuring and may take a session later.
    bool busy() const { return !channel && status == 503 && !why.empty(); }
};

/// Upgrades a connection to `peer` to a session. Throws session_error with a sentence that
/// says what to check when the peer cannot be resolved, reached, or is not a meshperfd.
session_attempt try_open_session(daemon_context& ctx, const transport::endpoint_address& peer);

/// The session_error for a refusal that is not busy(): the peer's sentence, or that it is
/// not a meshperfd.
session_error refusal_error(const transport::endpoint_address& peer, const session_attempt& refused);

/// Sleeps for `d` in short naps; false (early) when `cancel` is set.
bool sleep_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>& cancel);

}  // namespace meshperf::daemon
