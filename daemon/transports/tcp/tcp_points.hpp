#pragma once
/// The TCP plug-in of the peer session (daemon/sweep/point_transport.hpp, daemon/sweep/point_harness.hpp):
/// per point, data streams opened as upgraded connections to the peer's port, one thread
/// per stream (transport/tcp/point_side), counters sampled every tick; GPU memory staged
/// through pinned chunks.
#include "daemon/runtime/context.hpp"
#include "daemon/sweep/point_transport.hpp"
#include "transport/socket.hpp"

#include <memory>
#include <vector>

namespace meshperf::daemon {

/// The initiator's TCP transport for a run against `peer`. `byte_cap`: the agreed
/// max_bytes_per_point (0: none). `cpus`: this side's CPUs for the run, where every point's
/// stream threads are pinned (empty: unpinned). Throws what the memory domain's set-up throws.
std::unique_ptr<initiator_transport> make_tcp_initiator_transport(const daemon_context& ctx, transport::endpoint_address peer,
                                                                  const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus);

/// The peer's TCP transport for a session on `ch`. What it receives is held to this
/// daemon's own byte limit; its stream threads are pinned to `cpus`. Throws when its
/// memory domain cannot be set up.
std::unique_ptr<responder_transport> make_tcp_responder_transport(daemon_context& ctx, const frame_channel& ch,
                                                                  const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus);

}  // namespace meshperf::daemon
