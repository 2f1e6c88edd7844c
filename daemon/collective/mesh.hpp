#pragma once
/// The data connections of a collective run (daemon/collective/engine.hpp): one plain
/// TCP connection per pair of ranks that exchange data or barrier tokens, opened by the lower
/// rank as a /v1/stream upgrade to the higher rank's port, with a token per pair that only the
/// higher rank's session expects (daemon/runtime/stream_registry.hpp).
#include "core/collective/spec.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/collective/collective_plugin.hpp"
#include "daemon/collective/engine.hpp"

#include <string>
#include <vector>

namespace meshperf::daemon {

/// This rank's expectation of the connections its lower peers open, from before it answers
/// the hello until the mesh is connected (or the run ends): the registry's tokens, forgotten
/// (and any early socket closed) when this goes.
class mesh_expectation {
public:
    mesh_expectation(daemon_context& ctx, const std::string& run_token, unsigned rank, const std::vector<unsigned>& peers);
    ~mesh_expectation();
    mesh_expectation(const mesh_expectation&) = delete;
    mesh_expectation& operator=(const mesh_expectation&) = delete;

    /// Opens the connections to the higher peers, then waits (until `deadline`) for the lower
    /// peers' ones, then has the spec's transport (its plug-in from `find_plugin`) open its own
    /// links over them. Throws session_error naming the rank that could not be reached or did
    /// not connect in time, or why the transport could not open its links.
    collective_mesh connect(const core::collective_spec& spec, transport::clock::time_point deadline,
                            const collective_plugin_lookup& find_plugin);

private:
    daemon_context& ctx_;
    std::string run_token_;
    unsigned rank_;
    std::vector<unsigned> peers_;
};

}  // namespace meshperf::daemon
