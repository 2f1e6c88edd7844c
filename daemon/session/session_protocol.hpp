#pragma once
/// Constants and rules of the peer session, shared by both of its uses (a sweep's initiator
/// and responder, a collective's coordinator and ranks). The protocol (frames, order of
/// messages) is described in docs/architecture.md.
#include "core/placement.hpp"
#include "core/run_spec.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// Thrown when a run is cancelled (DELETE /v1/runs/{id}) between or inside points, a sweep's
/// or a collective's.
class run_cancelled : public std::runtime_error {
public:
    run_cancelled() : std::runtime_error("cancelled") {}
};

/// Receives a run's progress events ({"event": "point", ...}, "waiting", "started").
using event_sink = std::function<void(const nlohmann::json&)>;

/// Major version of the peer-session protocol. Daemons with the same major version work
/// together; a different one is refused with a message naming both.
int session_protocol_version();

/// The bytes one point may move per direction: the lower of this daemon's limit and the
/// other side's, which its hello (from the initiator) or hello_ok (from the peer) carries
/// in "limits"; an older daemon that does not say is held to ours.
std::uint64_t agreed_byte_cap(const core::run_limits& own, const nlohmann::json& other_hello);

/// The peer's sentences about its GPU memory, from the "memory_notes" array of a session
/// message (hello_ok for TCP, the endpoint frame for RDMA): at most 8 strings of at most 500
/// characters; anything else there is ignored, since a peer's JSON is not trusted.
std::vector<std::string> peer_memory_notes(const nlohmann::json& message);

/// Milliseconds the peer session may leave sent data unacknowledged, or stay silent without
/// answering keepalive probes, before the kernel ends it (TCP_USER_TIMEOUT and keepalive on
/// both ends' session socket): a cut link or a vanished host ends the session in about this
/// long, whatever step it is in, while a live peer's kernel answers even when its daemon is
/// quiet. Longer than the data streams' bound, so a failing point reports its stream error.
inline constexpr unsigned session_user_timeout_ms = 8000;

/// Sets session_user_timeout_ms and keepalive on a session's socket. Both ends call it
/// first thing, so a cut link or a vanished host ends the session in seconds, whatever step
/// it is in (and frees the gate at the peer).
void guard_session_socket(int fd);
/// What a hello (from the initiator) or hello_ok (from the peer) says about that side's
/// measuring threads, in its "placement" object.
struct announced_placement {
    std::string boot_id;    ///< the sender's /proc/sys/kernel/random/boot_id; empty: not said
    std::vector<int> cpus;  ///< the CPUs it pins its threads to for the run; empty: none
};
/// Reads "placement" from a hello or hello_ok; empty when absent (a daemon older than the
/// field) or malformed (a peer's JSON is not trusted: at most 8192 CPUs, boot id at most 64
/// characters).
std::optional<announced_placement> announced_placement_of(const nlohmann::json& hello);

/// Where the peer's threads ran in a point, from its point_done's "placement"; empty when
/// absent (an older peer) or malformed.
std::optional<core::side_placement> reported_placement(const nlohmann::json& point_done);

/// Upgrade tokens of the peer session and of data streams.
inline constexpr const char* session_upgrade = "meshperf-session/1";
inline constexpr const char* data_upgrade = "meshperf-data/1";
/// Header carrying the session protocol version on the upgrade request.
inline constexpr const char* protocol_header = "X-Meshperf-Protocol";

/// How often a receiving side reports its counters, and how often the initiator decides.
inline constexpr std::chrono::milliseconds progress_tick{25};
/// Bounds on each step: connect and handshake, waiting for the data streams, a point's
/// end-of-point report, and a silent session between points.
inline constexpr std::chrono::seconds handshake_timeout{10};
inline constexpr std::chrono::seconds streams_timeout{10};
inline constexpr std::chrono::seconds point_done_timeout{30};
/// The same wait when this side's data streams have already failed.
inline constexpr std::chrono::seconds failed_point_done_timeout{3};
/// The longest a serving daemon waits between points for the next point_begin or bye: only
/// those count as progress (a heartbeat or a stray point_stop does not extend it).
inline constexpr std::chrono::seconds idle_session_timeout{120};
/// How often the initiator sends a heartbeat frame while a point runs and while it waits
/// for the point's end; the peer ends the session after run_limits::initiator_silence_s
/// without any frame.
inline constexpr std::chrono::milliseconds session_heartbeat_interval{1000};

/// run_limits::initiator_silence_s as a clock duration.
std::chrono::steady_clock::duration initiator_silence(const core::run_limits& limits);

/// What a serving daemon says (and logs) when it ends a session whose initiator `peer` went
/// silent for run_limits::initiator_silence_s.
std::string initiator_silence_message(const std::string& peer, const core::run_limits& limits);
/// How long an initiator keeps asking a busy peer before the run fails.
inline constexpr std::chrono::seconds busy_peer_patience{120};

}  // namespace meshperf::daemon
