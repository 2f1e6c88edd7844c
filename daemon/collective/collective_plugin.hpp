#pragma once
/// A transport's part of a collective run, above the mesh's TCP sockets: the links it opens
/// over them (RDMA: a queue pair per peer), which then carry the data. The collective code
/// (daemon/collective/mesh.cpp) knows nothing else of a transport: it gets the plug-in from the
/// transport registry (daemon/transports/registry.hpp) through its caller.
#include "core/collective/spec.hpp"
#include "daemon/collective/engine.hpp"
#include "daemon/test_hooks/collective_hooks.hpp"
#include "transport/socket.hpp"

#include <functional>
#include <string_view>

namespace meshperf::daemon {

/// A transport's collective plug-in.
struct collective_plugin {
    /// Once every socket of `mesh` is connected: opens the transport's own links to the same
    /// peers (spec's device, port and memory), exchanging what they need over the sockets,
    /// and sets mesh.links. Throws session_error with the device's error or the peer that did
    /// not answer by `deadline`. Empty: the data moves over the sockets themselves (TCP).
    std::function<void(collective_mesh& mesh, const core::collective_spec& spec, transport::clock::time_point deadline,
                       const collective_test_hooks& hooks)>
        connect_links;
};

/// The collective plug-in of the transport a spec names; throws core::spec_error naming the
/// transports this daemon has, and why the others are not here, for one it cannot run.
using collective_plugin_lookup = std::function<const collective_plugin&(std::string_view transport)>;

}  // namespace meshperf::daemon
