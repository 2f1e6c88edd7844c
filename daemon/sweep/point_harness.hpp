#pragma once
/// The per-point session protocol, once for every transport (in the style of nccl-tests:
/// one harness, one small plug-in per case). The harness owns the frames (point_begin,
/// point_ready, point_go, progress, point_stop, point_done), the timers, cancellation, the
/// silent-peer watchdog, the order in which failures are reported and the agreed-spec
/// checks; a transport fills in only what differs: how its data path is armed, started,
/// sampled, stopped and turned into figures. Called once per point, never per message.
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/sweep/point_figures.hpp"
#include "daemon/sweep/point_link_counters.hpp"
#include "daemon/session/run_placement.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/stream_thread.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// One point: what it measures and its 1-based index in the run.
struct point_key {
    core::test_kind test;
    std::uint64_t size;
    std::size_t index;
};

/// The initiator's side of one point, as a transport provides it. The harness calls, in
/// order: begin_fields, arm (before the peer is ready), connect (after point_ready), start
/// (after point_go); then every tick peer_progress for each report and sample; stop and
/// settle once the point is over; finish with the peer's point_done; figures last. abort
/// may come at any step after a failure; then nothing else is called.
class initiator_point {
public:
    virtual ~initiator_point() = default;
    /// Fields of point_begin besides index, test and size (TCP: the data streams' token).
    virtual nlohmann::json begin_fields() { return nlohmann::json::object(); }
    /// Before the peer answers point_ready (RDMA: passive runners armed).
    virtual void arm() {}
    /// After point_ready, before point_go (TCP: data streams opened; RDMA: active runners started).
    virtual void connect() = 0;
    /// After point_go (TCP: stream threads started).
    virtual void start() {}
    /// A progress report of the peer: seconds since its start, bytes per counting flow.
    virtual void peer_progress(double t_s, const std::vector<std::uint64_t>& bytes) = 0;
    /// Takes this side's counters at `elapsed_s` since point_go.
    virtual void sample(double elapsed_s) = 0;
    /// The flows measured over time, for the adaptive and time-cap decisions (may be empty).
    virtual std::vector<tracked_flow> flows() const = 0;
    /// True when this side's work has ended by itself (every stream ended, the latency
    /// batches done); the point then stops at once.
    virtual bool ended() = 0;
    /// True when a flow has moved the agreed byte cap, checked every tick (a transport whose
    /// streams stop by themselves at the cap returns false and ends instead).
    virtual bool at_byte_cap() { return false; }
    /// Tells the active side to stop. Returns the point_stop frame's body, or null when the
    /// peer must not get one (a TCP fixed-length point ends by itself at the peer).
    virtual nlohmann::json stop(bool fixed_length, bool cancelled) = 0;
    /// After point_stop: waits for this side's threads (TCP joins its streams).
    virtual void settle() {}
    /// Whether the peer keeps reporting until its point_done (so silence since its last
    /// report means it is gone); else it may be quiet after point_stop while it finishes.
    virtual bool peer_reports_until_done() const = 0;
    /// Seconds the peer may stay silent at the end of an adaptive or duration point.
    virtual std::chrono::seconds peer_silence_limit() const = 0;
    /// After the peer's point_done: completes with its counts (RDMA passive runners).
    virtual void finish(const nlohmann::json& peer_done) { (void)peer_done; }
    /// This side's failure in words (empty: none) and whether its data failed verification.
    virtual std::string error() const = 0;
    virtual bool verify_failed() const = 0;
    /// The checked point, from what this side measured and the peer's point_done.
    virtual core::point_result figures(const nlohmann::json& peer_done) = 0;
    /// Ends a failed point now: blocked threads return, resources are freed. Never throws.
    virtual void abort() noexcept = 0;
    /// Names this transport's data path in failure messages ("data stream", "RDMA").
    virtual std::string_view data_path_name() const = 0;
    /// Where this side's measuring threads ran (empty before they started).
    virtual std::vector<transport::thread_cpu_record> thread_cpus() const = 0;
    /// The data path's own counter source besides the NIC, once connected (an RDMA port,
    /// core/counter_sources.hpp); none for TCP.
    virtual std::optional<transport::counter_source_target> device_counters() const { return std::nullopt; }
    /// Over rails: each rail's own counter source, in the order of spec.rails (read with its NIC).
    virtual std::vector<transport::counter_source_target> rail_device_counters() const { return {}; }
};

/// A progress report: seconds since the point's start, bytes per counting flow.
struct progress_report {
    double t_s = 0;
    std::vector<std::uint64_t> bytes;
};

/// The bytes of all flows or streams together (a plug-in's counters, a progress report).
inline std::uint64_t total_bytes(const std::vector<std::uint64_t>& per_flow) {
    std::uint64_t total = 0;
    for (auto b : per_flow) total += b;
    return total;
}

/// The peer's side of one point. The harness calls arm (before point_ready), connect (after
/// it, before point_go), start (after point_go); then every tick sample, check_limits and,
/// when it reports, counted_bytes; on point_stop, stop; once ended, finish, final_report and
/// done_fields for point_done.
class responder_point {
public:
    virtual ~responder_point() = default;
    /// Before point_ready (TCP: expects the data streams; RDMA: passive runners armed).
    virtual void arm() = 0;
    /// After point_ready, before point_go (TCP: waits for its data streams).
    virtual void connect() {}
    /// After point_go (TCP: stream threads; RDMA: active runners).
    virtual void start() = 0;
    /// True when this side sends progress reports (it counts received bytes).
    virtual bool reports() const = 0;
    /// This side's counted bytes per flow, for a progress report.
    virtual std::vector<std::uint64_t> counted_bytes() const = 0;
    /// Every tick, `elapsed_s` since point_go on this side's clock (TCP: its senders' counters
    /// read as the measured window is about to open).
    virtual void sample(double elapsed_s) { (void)elapsed_s; }
    /// Enforces this daemon's own byte limit every tick; throws session_error to end the
    /// point when the initiator overruns it.
    virtual void check_limits() = 0;
    /// The initiator's point_stop (its body: RDMA message counts).
    virtual void stop(const nlohmann::json& body) = 0;
    /// True when the point is over at this side: TCP once every stream ended, RDMA once the
    /// initiator said stop.
    virtual bool ended(bool stop_received) const = 0;
    /// After the point ended: completes this side (TCP joins its streams; RDMA retires its
    /// passive runners with the initiator's counts from point_stop).
    virtual void finish(bool stop_received) = 0;
    /// A last progress report to send before point_done (TCP streams that ended by
    /// themselves report their bytes at their end of stream), or none.
    virtual std::optional<progress_report> final_report() const { return std::nullopt; }
    /// The point_done body (the harness adds cpu_s, wall_s, error, verify_failed).
    virtual nlohmann::json done_fields() = 0;
    virtual double cpu_seconds() const = 0;
    virtual double wall_seconds() const = 0;
    virtual std::string error() const = 0;
    virtual bool verify_failed() const = 0;
    /// Where this side's measuring threads ran (empty before they started).
    virtual std::vector<transport::thread_cpu_record> thread_cpus() const = 0;
    /// Ends a failed point now. Never throws.
    virtual void abort() noexcept = 0;
    /// The data path's own counter source besides the NIC, once connected (an RDMA port,
    /// core/counter_sources.hpp); none for TCP.
    virtual std::optional<transport::counter_source_target> device_counters() const { return std::nullopt; }
    /// Over rails: each rail's own counter source, in the order of spec.rails (read with its NIC).
    virtual std::vector<transport::counter_source_target> rail_device_counters() const { return {}; }
};

/// Measures one point with the peer through `ops`: the frames, the stop decisions (fixed
/// length, byte cap, time cap, precision target, cancel, the run time limit), the wait for
/// point_done under the silent-peer watchdog, and failures in the order that explains them
/// best (this side's data path before the silence that followed). Throws session_error,
/// run_cancelled, or what the transport throws; aborts `ops` on every failure. The point's
/// placement comes from this side's thread records under `placement` and the peer's report;
/// its link counters from the NIC and RDMA port under `sysfs_root` and the peer's.
core::point_result run_initiator_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                                       const run_placement& placement, const point_key& key, initiator_point& ops,
                                       const std::atomic<bool>& cancel, const std::filesystem::path& sysfs_root);

/// The responder's view of a point_begin frame: test, size and index, checked against the
/// agreed spec (both the test and the size must be in it). Throws session_error.
point_key parse_point_begin(const core::run_spec& spec, const nlohmann::json& begin);

/// Serves one point announced by point_begin through `ops`. Throws session_error (which
/// the caller sends to the initiator); aborts `ops` on every failure.
/// `limits`: this daemon's, bounding how long a fixed-length point may last. point_done
/// says where this side's threads ran, under `placement`, and what this side's NIC and RDMA
/// port counters (under `sysfs_root`) did.
void run_responder_point(frame_channel& ch, const core::run_spec& spec, const core::run_limits& limits,
                         const run_placement& placement, const point_key& key, responder_point& ops,
                         const std::filesystem::path& sysfs_root);

}  // namespace meshperf::daemon
