#pragma once
/// The libfabric side of a collective run: one endpoint per rank with every peer's address,
/// swapped over the mesh's TCP sockets; the engine then moves the data over it
/// (transport/mesh/ofi_data_links.hpp).
#include "core/collective/spec.hpp"
#include "daemon/collective/engine.hpp"
#include "daemon/test_hooks/collective_hooks.hpp"

namespace meshperf::daemon {

/// The ofi entry's collective plug-in (collective_plugin::connect_links): picks the best
/// provider of efa, cxi, verbs, tcp this rank has (every rank must pick the same: a peer
/// that picked another is refused, naming both), opens the endpoint bound to this rank's
/// address, sends each peer its address and the tag to put on messages to this rank, inserts
/// theirs, and sets mesh.links. Throws session_error.
void connect_ofi_links(collective_mesh& mesh, const core::collective_spec& spec, transport::clock::time_point deadline,
                       const collective_test_hooks& hooks);

}  // namespace meshperf::daemon
