#include "daemon/collective/participant.hpp"

#include "core/counter_sources.hpp"
#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/collective/mesh.hpp"
#include "daemon/collective/wire.hpp"
#include "daemon/session/session_protocol.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;

/// The plan, the rank and the mesh token from a hello; throws session_error with why not.
struct collective_hello {
    core::collective_spec spec;
    unsigned rank = 0;
    std::string token;
};

collective_hello read_hello(const daemon_context& ctx, const json& body) {
    collective_hello h;
    try {
        h.spec = core::collective_spec_from_json(body.at("collective"), normalize_host, collective_limits_of(ctx.limits));
        h.rank = static_cast<unsigned>(core::json_unsigned(body.at("rank"), "rank", UINT32_MAX));
        h.token = body.at("token").get<std::string>();
    } catch (const std::exception& e) {
        throw session_error(fmt::format("this daemon refuses the collective plan: {}", e.what()));
    }
    if (h.rank >= h.spec.hosts.size()) throw session_error(fmt::format("this daemon was given rank {} of {}", h.rank, h.spec.hosts.size()));
    if (h.token.empty() || h.token.size() > 64) throw session_error("the collective's data token is malformed");
    require_collective_memory(h.spec, ctx.collective_hooks, rank_name(h.spec, h.rank));
    return h;
}

/// Sends a data-path fault to the coordinator with the rank it blames.
void report_fault(frame_channel& ch, const collective_hello& h, const collective_size_key& key, const collective_fault& f) {
    json body = {{"message", fmt::format("{}: {}: {}", rank_name(h.spec, h.rank), describe(key), f.what())}};
    if (f.peer) body["blame"] = *f.peer;
    try {
        ch.send(core::frame_type::error, body, clock::now() + std::chrono::seconds(1));
    } catch (...) {
    }
}

}  // namespace

bool is_collective_hello(const json& body) { return body.is_object() && body.contains("collective"); }

void serve_collective(daemon_context& ctx, frame_channel& ch, const session_message& hello,
                      const collective_plugin_lookup& find_plugin) {
    const auto h = read_hello(ctx, hello.body);
    const auto& spec = h.spec;
    const unsigned p = static_cast<unsigned>(spec.hosts.size());
    const auto algos = algos_of(spec);
    mesh_expectation expect(ctx, h.token, h.rank, mesh_peers(spec.ops, algos, p, h.rank, spec.element, spec.sizes.front()));
    ch.send(core::frame_type::hello_ok,
            {{"protocol", session_protocol_version()},
             {"host", core::to_json(ctx.host)},
             {"limits", {{"max_bytes_per_point", ctx.limits.max_bytes_per_point}}}},
            clock::now() + handshake_timeout);
    log_info("session {}: collective run {} accepted as {}", ch.peer_name(), hello.body.value("run_id", "?"),
             rank_name(spec, h.rank));
    const auto go = ch.receive(clock::now() + handshake_timeout);
    if (go.type != core::frame_type::point_go) throw session_error("the coordinator did not ask for the data connections");
    auto mesh = expect.connect(spec, clock::now() + streams_timeout, find_plugin);
    // How this rank moves device memory, for the coordinator's result (empty: host memory or over the sockets).
    ch.send(core::frame_type::point_ready, {{"memory", mesh.links ? mesh.links->memory_note() : std::string()}},
            clock::now() + handshake_timeout);
    auto options = run_options_of(spec, ctx.limits, ctx.collective_hooks);
    options.sysfs_root = ctx.sysfs_root;
    options.link_counter_target.count(core::nic_source_kind, transport::interface_for_address(transport::local_ip(ch.fd())));
    const std::atomic<bool> never{false};  // the coordinator ends a run by closing its connections
    while (true) {
        const auto m = ch.receive(clock::now() + idle_session_timeout);
        if (m.type == core::frame_type::bye) return;
        if (m.type != core::frame_type::point_begin)
            throw session_error(fmt::format("unexpected {} in a collective run",
                                            core::frame_type_name(static_cast<std::uint16_t>(m.type))));
        const auto key = collective_size_key_from_json(m.body, spec);
        const auto algo = core::algo_for(spec, key.op);
        rank_timing t;
        try {
            t = measure_collective_size(core::plan_collective(key.op, algo, p, h.rank, spec.element, key.size), mesh, options, never);
        } catch (const collective_fault& f) {
            log_warn("collective run {}: {}: {}", hello.body.value("run_id", "?"), describe(key), f.what());
            mesh.close();  // the other ranks see the connections close at once
            report_fault(ch, h, key, f);
            return;
        }
        ch.send(core::frame_type::point_done, to_json(t), clock::now() + handshake_timeout);
    }
}

}  // namespace meshperf::daemon
