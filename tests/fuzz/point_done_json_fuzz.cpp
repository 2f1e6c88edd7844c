/// Fuzz target: the counters a peer sends in a sweep point's point_done (daemon/sweep):
/// "link_counters" (its NIC and RDMA port deltas, daemon::peer_link_counters), over rails
/// "rail_link_counters" (one entry or null per rail, read for a run of 2 rails) and
/// "tcp_counters" (its sending streams' TCP counters, core::tcp_point_counters_from_json),
/// "failed_rails" (the rails that failed at the peer, daemon::point_rails::peer_rail_failures),
/// and, read as the point_begin it may also be, "rails_dropped" (point_rails::dropped_from_begin).
/// Peers are authenticated, but their JSON is not trusted: session_error (link counters) and
/// spec_error (TCP counters) are the only outcomes allowed for bad input. What is accepted
/// must read back identical from its JSON form, and a point that carries it (with its
/// warnings) must survive the result's JSON dump, which the daemon does for every run it stores.
#include "core/error.hpp"
#include "core/result.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/sweep/point_link_counters.hpp"
#include "daemon/sweep/rail_failures.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace {

using namespace meshperf;

/// Each side that was accepted reads back identical from its JSON form.
void check_reads_back(const std::optional<core::link_side_counters>& c) {
    if (!c) return;
    const auto wire = core::to_json(*c);
    try {
        const auto again = core::link_side_counters_from_json(nlohmann::json::parse(wire.dump()));
        if (core::to_json(again) != wire) fuzz::property_failed("link counters do not read back identical from their JSON form");
    } catch (const core::spec_error&) {
        fuzz::property_failed("link counters accepted once are refused from their own JSON form");
    }
}

/// The peer's counters as the initiator reads them, for a run without rails and for one
/// over `rail_count` rails ("rail_link_counters" must then list that many).
void check_link_counters(const nlohmann::json& done, std::size_t rail_count) {
    daemon::end_link_counters c;
    try {
        c = daemon::peer_link_counters(done, rail_count);
    } catch (const daemon::session_error&) {
        return;
    }
    check_reads_back(c.path);
    for (const auto& r : c.rails) check_reads_back(r);
    if (c.rails.size() > rail_count) fuzz::property_failed("more rails' counters accepted than the run has rails");
    core::point_result p;
    p.test = core::test_kind::bandwidth;
    p.size_bytes = 1 << 20;
    p.flows.push_back({"peer->initiator", 1'000'000, 1.0, 0.008, 122, 0.008, 0.008, {0.008}});
    std::vector<core::rail_pair> rails;
    for (std::size_t k = 0; k < rail_count; ++k)
        rails.push_back({"ra" + std::to_string(k), "rb" + std::to_string(k), "10.0." + std::to_string(k) + ".1",
                         "10.0." + std::to_string(k) + ".2", std::nullopt});
    try {
        daemon::attach_link_counters(p, {}, c, rails);
    } catch (const core::insane_figure&) {
        return;
    }
    (void)core::to_json(p).dump();  // throws on invalid UTF-8: the crash class this guards
}

void check_tcp_counters(const nlohmann::json& done) {
    const auto it = done.find("tcp_counters");
    if (it == done.end()) return;
    try {
        const auto c = core::tcp_point_counters_from_json(*it);
        (void)core::to_json(c).dump();
    } catch (const core::spec_error&) {
    }
}

/// A peer's failed rails, and the rails a point_begin drops, for a run over two rails: only
/// session_error for bad input; what is accepted names rails of the run, each once, and at
/// least one rail survives what point_begin drops.
void check_rail_failures(const nlohmann::json& frame) {
    core::run_spec spec;
    spec.rails = {{"ra0", "rb0", "10.0.0.1", "10.0.0.2", std::nullopt}, {"ra1", "rb1", "10.0.1.1", "10.0.1.2", std::nullopt}};
    const auto named_once = [&](const std::vector<core::rail_failure>& failed, const char* what) {
        if (failed.size() > spec.rails.size()) fuzz::property_failed((std::string(what) + ": more failed rails than the run has").c_str());
        for (std::size_t i = 0; i < failed.size(); ++i) {
            if (failed[i].name != "ra0" && failed[i].name != "ra1") fuzz::property_failed((std::string(what) + ": a rail the run lacks").c_str());
            for (std::size_t j = 0; j < i; ++j)
                if (failed[i].name == failed[j].name) fuzz::property_failed((std::string(what) + ": a rail named twice").c_str());
        }
    };
    try {
        const auto failed = daemon::point_rails::peer_rail_failures(frame, spec);
        named_once(failed, "failed_rails");
        nlohmann::json j = daemon::point_rails::to_json(failed);
        (void)j.dump();  // the errors go into the stored result
    } catch (const daemon::session_error&) {
    }
    try {
        const auto dropped = daemon::point_rails::dropped_from_begin(frame, spec);
        named_once(dropped, "rails_dropped");
        if (dropped.size() >= spec.rails.size()) fuzz::property_failed("point_begin dropped every rail and was accepted");
    } catch (const daemon::session_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto done = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
    if (done.is_discarded() || !done.is_object()) return 0;
    check_link_counters(done, 0);
    check_link_counters(done, 2);
    check_tcp_counters(done);
    check_rail_failures(done);
    return 0;
}
