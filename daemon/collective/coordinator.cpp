#include "daemon/collective/coordinator.hpp"

#include "core/counter_sources.hpp"
#include "core/error.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/collective/mesh.hpp"
#include "daemon/collective/size_loop.hpp"
#include "daemon/collective/wire.hpp"
#include "daemon/session/session_opening.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

using transport::clock;
using nlohmann::json;

class coordinator {
public:
    coordinator(daemon_context& ctx, core::collective_result& result, const event_sink& emit, const std::atomic<bool>& cancel,
                const collective_plugin_lookup& find_plugin)
        : ctx_(ctx), r_(result), spec_(result.spec), emit_(emit), cancel_(cancel), find_plugin_(find_plugin),
          p_(static_cast<unsigned>(spec_.hosts.size())),
          me_(static_cast<unsigned>(std::find(spec_.hosts.begin(), spec_.hosts.end(), core::coordinator_of(spec_)) -
                                    spec_.hosts.begin())),
          token_(new_mesh_token()), options_(run_options_of(spec_, ctx_.limits, ctx_.collective_hooks)), sessions_(p_) {}

    void run() {
        open_sessions();
        count_this_ranks_nic();
        hand_out_plan();
        connect_mesh();
        json hosts = json::array();
        for (const auto& h : r_.hosts) hosts.push_back(core::to_json(h));
        emit_({{"event", "started"}, {"hosts", hosts}});
        measure_all_sizes({ctx_.limits, me_, sessions_, mesh_, options_}, r_, emit_, cancel_);
        for (unsigned q = 0; q < p_; ++q) {
            if (!sessions_[q]) continue;
            try {
                sessions_[q]->send(core::frame_type::bye, json::object(), clock::now() + handshake_timeout);
            } catch (const session_error&) {
                // Everything is measured; a rank that left early loses nothing.
            }
        }
    }

private:
    /// This rank's NIC counters are read around each size: the interface of the address its
    /// sessions to the other ranks leave from.
    void count_this_ranks_nic() {
        options_.sysfs_root = ctx_.sysfs_root;
        for (const auto& s : sessions_)
            if (s) {
                options_.link_counter_target.count(core::nic_source_kind, transport::interface_for_address(transport::local_ip(s->fd())));
                return;
            }
    }

    /// A session with every other rank, holding this daemon's gate; a busy rank is waited
    /// for (everything given back meanwhile, so two coordinators cannot block each other).
    void open_sessions() {
        busy_wait waiter(emit_, cancel_);
        auto wait_busy = [&](const std::string& why) {
            if (!waiter.wait(why)) throw collective_run_error(waiter.gave_up(why), std::nullopt, true);
        };
        while (true) {
            std::string holder;
            lease_ = ctx_.gate.try_acquire("collective run " + r_.id, holder);
            if (!lease_) {
                wait_busy(fmt::format("this daemon is busy ({})", holder));
                continue;
            }
            std::string busy;
            for (unsigned q = 0; q < p_ && busy.empty(); ++q) {
                if (q == me_) continue;
                const auto ep = transport::parse_endpoint(spec_.hosts[q]);
                session_attempt a;
                try {
                    check_run_target(ctx_, spec_.hosts[q]);  // the allow-list, as for a sweep's peer
                    a = try_open_session(ctx_, ep);
                } catch (const core::spec_error& e) {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
                } catch (const session_error& e) {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
                }
                if (a.channel) {
                    sessions_[q].emplace(std::move(*a.channel));
                    guard_session_socket(sessions_[q]->fd());
                } else if (a.busy()) {
                    busy = fmt::format("{} is busy: {}", rank_name(spec_, q), a.why);
                } else {
                    throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q),
                                                           refusal_error(ep, a).what()),
                                               q, true);
                }
            }
            if (busy.empty()) return;
            for (auto& s : sessions_) s.reset();
            lease_.release();
            wait_busy(busy);
        }
    }

    /// The plan to every rank; every rank's host facts back.
    void hand_out_plan() {
        expect_.emplace(ctx_, token_, me_, mesh_peers(spec_.ops, algos_of(spec_), p_, me_, spec_.element, spec_.sizes.front()));
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    sessions_[q]->send(core::frame_type::hello,
                                       {{"protocol", session_protocol_version()}, {"version", MESHPERF_VERSION}, {"run_id", r_.id},
                                        {"collective", core::to_json(spec_)}, {"rank", q}, {"token", token_},
                                        {"initiator", core::to_json(ctx_.host)},
                                        {"limits", {{"max_bytes_per_point", ctx_.limits.max_bytes_per_point}}}},
                                       clock::now() + handshake_timeout);
                });
        r_.hosts.assign(p_, core::host_info{});
        r_.hosts[me_] = ctx_.host;
        r_.hosts[me_].address = spec_.hosts[me_];
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    const auto ok = sessions_[q]->receive(clock::now() + handshake_timeout);
                    if (ok.type != core::frame_type::hello_ok) throw session_error("it answered the plan with an unexpected frame");
                    r_.hosts[q] = core::host_info_from_json(ok.body.value("host", json::object()));
                    r_.hosts[q].address = spec_.hosts[q];
                });
    }

    /// Every rank's data connections, this one's included.
    void connect_mesh() {
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] { sessions_[q]->send(core::frame_type::point_go, {{"mesh", true}}, clock::now() + handshake_timeout); });
        try {
            mesh_ = expect_->connect(spec_, clock::now() + streams_timeout, find_plugin_);
        } catch (const session_error& e) {
            throw collective_run_error(fmt::format("{} could not connect: {}", rank_name(spec_, me_), e.what()), std::nullopt, true);
        }
        std::vector<std::string> memory(p_);  // how each rank moves device memory (empty: host memory or over the sockets)
        if (mesh_.links) memory[me_] = mesh_.links->memory_note();
        for (unsigned q = 0; q < p_; ++q)
            if (q != me_)
                at_start(q, [&] {
                    const auto ready = sessions_[q]->receive(clock::now() + streams_timeout + handshake_timeout);
                    if (ready.type != core::frame_type::point_ready) throw session_error("it did not confirm its data connections");
                    if (ready.body.is_object() && ready.body.contains("memory") && ready.body["memory"].is_string())
                        memory[q] = ready.body["memory"].get<std::string>().substr(0, 200);
                });
        expect_.reset();
        for (unsigned q = 0; q < p_; ++q)
            if (!memory[q].empty()) r_.warnings.push_back(fmt::format("{}: memory {}: {}", rank_name(spec_, q), spec_.memory, memory[q]));
    }

    /// Runs `step` with rank q's session; a failure there means q could not join.
    template <class Step> void at_start(unsigned q, Step step) {
        try {
            step();
        } catch (const session_error& e) {
            throw collective_run_error(fmt::format("{} cannot join the run: {}", rank_name(spec_, q), e.what()), q, true);
        }
    }

    daemon_context& ctx_;
    core::collective_result& r_;
    const core::collective_spec& spec_;
    const event_sink& emit_;
    const std::atomic<bool>& cancel_;
    const collective_plugin_lookup& find_plugin_;
    const unsigned p_;
    const unsigned me_;
    const std::string token_;
    size_run_options options_;  // this rank's, once per run (its device memory checked once; its NIC once sessions are open)
    measurement_gate::lease lease_;
    std::vector<std::optional<frame_channel>> sessions_;
    std::optional<mesh_expectation> expect_;
    collective_mesh mesh_;
};

}  // namespace

void execute_collective(daemon_context& ctx, core::collective_result& result, const event_sink& emit,
                        const std::atomic<bool>& cancel, const collective_plugin_lookup& find_plugin) {
    require_collective_memory(result.spec, ctx.collective_hooks, "coordinator");  // the sweeps' error where there is no GPU
    coordinator(ctx, result, emit, cancel, find_plugin).run();
}

}  // namespace meshperf::daemon
