#pragma once
/// Opening a peer session (the /v1/session upgrade), one attempt at a time: shared by the
/// pairwise initiator (daemon/sweep/initiator.cpp), which retries a busy peer while it
/// gives its own gate back, and the collective coordinator, which opens one per rank.
#include "daemon/runtime/context.hpp"
#include "daemon/session/frame_channel.hpp"
#include "transport/socket.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
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

/// Waiting for a daemon that is busy measuring (this one, or a peer), as the initiator and the
/// coordinator both do: a "waiting" event whenever the reason changes, naps of 150–650 ms
/// (random, so two daemons starting runs against each other fall out of step), at most
/// busy_peer_patience in all.
class busy_wait {
public:
    busy_wait(std::function<void(const nlohmann::json&)> emit, const std::atomic<bool>& cancel);
    /// One nap for `why`. False once the patience is spent (the caller ends the run with
    /// gave_up); throws run_cancelled when the run is cancelled.
    bool wait(const std::string& why);
    /// "gave up after 120 s: <why>".
    std::string gave_up(const std::string& why) const;

private:
    std::function<void(const nlohmann::json&)> emit_;
    const std::atomic<bool>& cancel_;
    transport::clock::time_point give_up_;
    std::mt19937 rng_;
    std::string last_;
};

}  // namespace meshperf::daemon
