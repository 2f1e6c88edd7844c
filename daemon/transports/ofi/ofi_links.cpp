// The libfabric side of a collective run (ofi_links.hpp).
#include "daemon/transports/ofi/ofi_links.hpp"

#include "daemon/session/frame_channel.hpp"
#include "daemon/transports/link_setup.hpp"
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

/// Hex of an endpoint address, and back (a string of even length and hex digits, at most 512 bytes).
std::string to_hex(const std::string& bytes) {
    std::string out;
    for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
    return out;
}

std::string from_hex(const nlohmann::json& v, const std::string& who) {
    const auto bad = [&] { return session_error(fmt::format("{} sent a malformed libfabric address", who)); };
    if (!v.is_string()) throw bad();
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() % 2 || s.size() > 1024) throw bad();
    std::string out;
    for (std::size_t i = 0; i < s.size(); i += 2) {
        int value = 0;
        for (char c : {s[i], s[i + 1]}) {
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) throw bad();
            value = value * 16 + d;
        }
        out.push_back(static_cast<char>(value));
    }
    return out;
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
        setup.send(fds.back(), {{"provider", provider}, {"address", to_hex(links->address())}, {"tag", q}}, names.back());
    }
    for (std::size_t k = 0; k < peers.size(); ++k) {
        const auto j = setup.receive(fds[k], names[k]);
        const auto theirs = j.value("provider", std::string());
        if (theirs != provider)
            throw session_error(fmt::format("{} chose libfabric provider '{}' where this rank chose '{}': every rank of a "
                                            "collective over libfabric needs the same provider",
                                            names[k], theirs, provider));
        if (!j.contains("tag") || !j["tag"].is_number_unsigned())
            throw session_error(fmt::format("{} sent no tag for its libfabric messages", names[k]));
        try {
            links->connect(peers[k], from_hex(j.value("address", nlohmann::json()), names[k]), j["tag"].get<std::uint64_t>());
        } catch (const ofi::ofi_error& e) {
            throw session_error(fmt::format("cannot reach {} over libfabric: {}", names[k], e.what()));
        }
    }
    setup.exchange_ready(fds, names);
    mesh.links = transport::mesh::make_ofi_data_links(std::move(links));
}

}  // namespace meshperf::daemon
