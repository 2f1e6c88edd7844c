#include "daemon/collective/mesh.hpp"

#include "daemon/collective/wire.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/peer_upgrade.hpp"
#include "daemon/session/session_protocol.hpp"
#include "core/error.hpp"
#include "transport/http_client.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

/// The token of the connection from rank `low` to rank `high`.
std::string pair_token(const std::string& run_token, unsigned low, unsigned high) {
    return fmt::format("{}-{}-{}", run_token, low, high);
}

void tune(int fd) {
    transport::set_nodelay(fd, true);
    guard_session_socket(fd);  // a cut link ends a blocked send in seconds, as on a session
}

}  // namespace

mesh_expectation::mesh_expectation(daemon_context& ctx, const std::string& run_token, unsigned rank,
                                   const std::vector<unsigned>& peers)
    : ctx_(ctx), run_token_(run_token), rank_(rank), peers_(peers) {
    for (auto q : peers_)
        if (q < rank_) ctx_.streams.open(pair_token(run_token_, q, rank_), 1);
}

mesh_expectation::~mesh_expectation() {
    for (auto q : peers_)
        if (q < rank_) ctx_.streams.close(pair_token(run_token_, q, rank_));
}

collective_mesh mesh_expectation::connect(const core::collective_spec& spec, transport::clock::time_point deadline,
                                          const collective_plugin_lookup& find_plugin) {
    collective_mesh mesh;
    mesh.fds.resize(spec.hosts.size());
    for (auto q : peers_) {
        if (q < rank_) continue;
        transport::http_response refused;
        const auto target = fmt::format("/v1/stream?token={}&index=0", pair_token(run_token_, rank_, q));
        transport::upgraded_connection up;
        try {
            check_run_target(ctx_, spec.hosts[q]);  // this daemon's allow-list holds for what it connects to
            up = transport::http_upgrade(transport::parse_endpoint(spec.hosts[q]), upgrade_request(ctx_, target), data_upgrade,
                                         handshake_timeout, refused);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("cannot open the data connection to {}: {}", rank_name(spec, q), e.what()));
        }
        if (!up.stream)
            throw session_error(fmt::format("{} refused the data connection: {} {}", rank_name(spec, q), refused.status,
                                            refusal_message(refused)));
        if (!up.leftover.empty()) throw session_error(fmt::format("{} sent data before the run started", rank_name(spec, q)));
        mesh.fds[q] = up.stream->release_socket();
        tune(mesh.fds[q].get());
    }
    for (auto q : peers_) {
        if (q > rank_) continue;
        try {
            auto fds = ctx_.streams.wait(pair_token(run_token_, q, rank_), deadline);
            mesh.fds[q] = std::move(fds.at(0));
        } catch (const std::exception&) {
            throw session_error(fmt::format("{} did not open its data connection to this rank within {} s", rank_name(spec, q),
                                            streams_timeout.count()));
        }
        tune(mesh.fds[q].get());
    }
    const collective_plugin* plugin = nullptr;
    try {
        plugin = &find_plugin(spec.transport);
    } catch (const core::spec_error& e) {
        throw session_error(e.what());
    }
    if (plugin->connect_links) plugin->connect_links(mesh, spec, deadline, ctx_.collective_hooks);
    return mesh;
}

}  // namespace meshperf::daemon
