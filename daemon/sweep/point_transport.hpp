#pragma once
/// A transport's part of a peer session, above the point harness: what it sets up once per
/// run (TCP: staged GPU memory; RDMA: the endpoint exchange) and the plug-in it makes for
/// each point. The session code (daemon/sweep/initiator.cpp, daemon/sweep/responder.cpp) knows nothing
/// else of a transport; a new mode (collectives) adds one pair of these.
#include "core/result.hpp"
#include "daemon/sweep/point_harness.hpp"

#include <memory>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// The initiator's transport for one run.
class initiator_transport {
public:
    virtual ~initiator_transport() = default;
    /// After the peer's hello_ok: per-run set-up with the peer over the session, and the
    /// sentences the result carries about it (memory, device, path MTU) in run.warnings.
    virtual void open(frame_channel& ch, const nlohmann::json& hello_ok, core::run_result& run) = 0;
    /// Names the path in a failed point's message: "" for TCP, "rdma write " for RDMA.
    virtual std::string path_label() const = 0;
    /// The plug-in for one point.
    virtual std::unique_ptr<initiator_point> point(const point_key& key) = 0;
};

/// The responder's transport for one session.
class responder_transport {
public:
    virtual ~responder_transport() = default;
    /// Sentences about this side's memory, sent in hello_ok.
    virtual std::vector<std::string> hello_notes() const { return {}; }
    /// After hello_ok: per-run set-up with the initiator over the session.
    virtual void open(frame_channel& ch) { (void)ch; }
    /// The plug-in for the point announced by `begin`.
    virtual std::unique_ptr<responder_point> point(const point_key& key, const nlohmann::json& begin) = 0;
};

}  // namespace meshperf::daemon
