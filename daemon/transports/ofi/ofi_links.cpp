// The libfabric side of a collective run (ofi_links.hpp).
#include "daemon/transports/ofi/ofi_links.hpp"

#include "daemon/session/frame_channel.hpp"
#include "daemon/transports/link_setup.hpp"
#include "daemon/transports/ofi/ofi_wire.hpp"
#include "transport/mesh/ofi_data_links.hpp"
#include "transport/ofi/error.hpp"
#include "transport/ofi/mesh_links.hpp"
#include "transport/ofi/providers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshperf::daemon {

namespace ofi = transport::ofi;
using transport::clock;

namespace {

/// The first of efa, cxi, verbs, tcp this host has; throws session_error when none.
std::string mesh_provider() {
    const auto names = ofi::provider_names(ofi::list_provider_domains());
    for (auto p : ofi::preferred_providers())
        if (std::find(names.begin(), names.end(), p) != names.end()) return std::string(p);
    throw session_error(fmt::format("no libfabric provider for a network between hosts here (of {}; this host has [{}])",
                                    fmt::join(ofi::preferred_providers(), ", "), fmt::join(names, ", ")));
}

}  // namespace

void connect_ofi_links(collective_mesh& mesh, const core::collective_spec& spec, clock::time_point deadline,
                       const collective_test_hooks&) {
    if (spec.memory != "host")
        throw session_error(fmt::format("collectives over libfabric with {} memory (FI_HMEM) are not in this meshperf yet: use "
                                        "--memory host",
                                        spec.memory));
    std::vector<unsigned> peers;
    for (unsigned q = 0; q < mesh.fds.size(); ++q)
        if (mesh.fds[q]) peers.push_back(q);
    if (peers.empty()) throw session_error("this rank has no peer to open libfabric links to");
    const auto provider = mesh_provider();
    std::shared_ptr<ofi::mesh_links> links;
    try {
        links = std::make_shared<ofi::mesh_links>(provider, transport::local_ip(mesh.fds[peers.front()].get()), mesh.fds.size());
    } catch (const std::exception& e) {
        throw session_error(fmt::format("cannot open libfabric for the collective: {}", e.what()));
    }
    const link_setup setup("libfabric", deadline);
    std::vector<int> fds;
    std::vector<std::string> names;
    for (auto q : peers) {
        fds.push_back(mesh.fds[q].get());
        names.push_back(fmt::format("rank {}", q));
        // The tag its messages to this rank carry: its index here, by which this rank receives.
        setup.send(fds.back(), to_json(ofi_link_description{provider, links->address(), q}), names.back());
    }
    for (std::size_t k = 0; k < peers.size(); ++k) {
        ofi_link_description theirs;
        try {
            theirs = ofi_link_description_from_json(setup.receive(fds[k], names[k]));
        } catch (const session_error& e) {
            throw session_error(fmt::format("{}: {}", names[k], e.what()));
        }
        if (theirs.provider != provider)
            throw session_error(fmt::format("{} chose libfabric provider '{}' where this rank chose '{}': every rank of a "
                                            "collective over libfabric needs the same provider",
                                            names[k], theirs.provider, provider));
        try {
            links->connect(peers[k], theirs.address, theirs.tag);
        } catch (const ofi::ofi_error& e) {
            throw session_error(fmt::format("cannot reach {} over libfabric: {}", names[k], e.what()));
        }
    }
    setup.exchange_ready(fds, names);
    mesh.links = transport::mesh::make_ofi_data_links(std::move(links));
}

}  // namespace meshperf::daemon
