#pragma once
/// A transport's part of a peer session, above the point harness: what it sets up once per
/// run (TCP: staged GPU memory; RDMA: the endpoint exchange) and the plug-in it makes for
/// each point. The session code (daemon/sweep/initiator.cpp, daemon/sweep/responder.cpp) knows
/// nothing else of a transport: it gets the pair's factories (sweep_plugins) from the
/// transport registry (daemon/transports/registry.hpp) through its caller.
#include "core/result.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/sweep/point_harness.hpp"
#include "transport/socket.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
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

/// A transport's sweep plug-ins: the factories of its initiator and responder transports.
struct sweep_plugins {
    /// The initiator's transport for a run against `peer`. `byte_cap`: the agreed
    /// max_bytes_per_point (per direction; 0: none); a flow stops once it has moved it.
    /// `cpus`: this side's CPUs for the run, where every point's threads are pinned (empty:
    /// unpinned). Throws core::spec_error or session_error with why the run cannot start.
    std::function<std::unique_ptr<initiator_transport>(const daemon_context& ctx, transport::endpoint_address peer,
                                                       const core::run_spec& spec, std::uint64_t byte_cap,
                                                       std::vector<int> cpus)>
        initiator;
    /// The responder's transport for a session on `ch`, with the same byte cap and CPUs.
    /// Throws session_error with why this side cannot serve the run.
    std::function<std::unique_ptr<responder_transport>(daemon_context& ctx, const frame_channel& ch,
                                                       const core::run_spec& spec, std::uint64_t byte_cap,
                                                       std::vector<int> cpus)>
        responder;
};

/// The sweep plug-ins of the transport a spec names; throws core::spec_error naming the
/// transports this daemon has, and why the others are not here, for one it cannot run.
using sweep_plugin_lookup = std::function<const sweep_plugins&(std::string_view transport)>;

}  // namespace meshperf::daemon
