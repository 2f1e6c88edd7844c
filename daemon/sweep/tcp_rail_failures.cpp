#include "daemon/sweep/tcp_rail_failures.hpp"

#include "core/sizes.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon::tcp_rails {

using nlohmann::json;

std::size_t index_in_role(const std::vector<tcp::stream_role>& roles, std::size_t i) {
    return static_cast<std::size_t>(std::count(roles.begin(), roles.begin() + static_cast<std::ptrdiff_t>(i), roles[i]));
}

std::string stream_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles) {
    if (!side) return {};
    const auto failed = side->failed_stream();
    if (!failed || spec.rails.empty() || *failed >= roles.size()) return side->error();
    return core::with_stream_rail(side->error(), spec.rails, spec.streams, index_in_role(roles, *failed));
}

core::run_spec point_spec(const core::run_spec& run, const std::vector<core::rail_failure>& dropped) {
    core::run_spec s = run;
    std::erase_if(s.rails, [&](const core::rail_pair& r) {
        return std::any_of(dropped.begin(), dropped.end(), [&](const core::rail_failure& f) { return f.name == r.name; });
    });
    return s;
}

bool tolerates_rail_failures(const core::run_spec& spec, core::test_kind test) {
    return spec.rails.size() >= 2 && test != core::test_kind::latency && !spec.iterations;
}

std::vector<core::rail_failure> side_rail_failures(const tcp::point_side& side, const core::run_spec& spec,
                                                   const std::vector<tcp::stream_role>& roles, const std::string& where) {
    std::vector<core::rail_failure> out;
    if (spec.rails.empty()) return out;
    for (const auto i : side.failed_streams()) {
        if (i >= roles.size()) continue;
        const auto in_role = index_in_role(roles, i);
        const auto rail = core::rail_of_stream(in_role, spec.streams);
        if (rail >= spec.rails.size()) continue;
        const auto what = core::with_stream_rail(side.stream_error(i), spec.rails, spec.streams, in_role);
        core::merge_rail_failures(out, {{spec.rails[rail].name, fmt::format("data stream failed {}: {}", where, what)}});
    }
    return out;
}

std::string side_error(const tcp::point_side* side, const core::run_spec& spec, const std::vector<tcp::stream_role>& roles,
                       bool tolerant) {
    if (!side || side->failed_streams().empty()) return {};
    const auto failed = side->failed_streams();
    const bool all_on_rails = std::all_of(failed.begin(), failed.end(), [&](std::size_t i) {
        return i < roles.size() && core::rail_of_stream(index_in_role(roles, i), spec.streams) < spec.rails.size();
    });
    if (tolerant && all_on_rails && core::rails_survive(spec.rails, side_rail_failures(*side, spec, roles, "")))
        return {};
    return stream_error(side, spec, roles);
}

json to_json(const std::vector<core::rail_failure>& failed) {
    json out = json::array();
    for (const auto& f : failed) out.push_back({{"name", f.name}, {"error", f.error}});
    return out;
}

namespace {

bool names_rail(const core::run_spec& spec, const std::string& name) {
    return std::any_of(spec.rails.begin(), spec.rails.end(), [&](const core::rail_pair& r) { return r.name == name; });
}

}  // namespace

std::vector<core::rail_failure> peer_rail_failures(const json& peer_done, const core::run_spec& spec) {
    std::vector<core::rail_failure> out;
    const auto it = peer_done.find("failed_rails");
    if (it == peer_done.end() || it->is_null()) return out;
    if (!it->is_array() || it->size() > core::max_rails) throw session_error("the peer sent a malformed \"failed_rails\"");
    for (const auto& f : *it) {
        if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("error") || !f["error"].is_string() ||
            !names_rail(spec, f["name"].get<std::string>()))
            throw session_error(fmt::format("the peer sent a malformed \"failed_rails\" entry: {}", f.dump()));
        core::merge_rail_failures(out, {{f["name"].get<std::string>(), f["error"].get<std::string>()}});
    }
    return out;
}

std::vector<core::rail_failure> dropped_from_begin(const json& begin, const core::run_spec& run) {
    std::vector<core::rail_failure> out;
    const auto it = begin.find("rails_dropped");
    if (it == begin.end()) return out;
    if (!it->is_array() || it->size() >= std::max<std::size_t>(1, run.rails.size()))
        throw session_error("a malformed \"rails_dropped\" in point_begin");
    for (const auto& n : *it) {
        if (!n.is_string() || !names_rail(run, n.get<std::string>()))
            throw session_error(fmt::format("point_begin drops {}, no rail of the run", n.dump()));
        core::merge_rail_failures(out, {{n.get<std::string>(), {}}});
    }
    return out;
}

std::vector<bool> streams_on(const std::vector<core::rail_failure>& failed, const core::run_spec& spec, std::size_t streams) {
    std::vector<bool> out(streams, false);
    for (std::size_t i = 0; i < streams; ++i) {
        const auto rail = core::rail_of_stream(i, spec.streams);
        out[i] = rail < spec.rails.size() && std::any_of(failed.begin(), failed.end(), [&](const core::rail_failure& f) {
                     return f.name == spec.rails[rail].name;
                 });
    }
    return out;
}

std::vector<core::rail_failure> point_rail_failures(const tcp::point_side& side, const json& peer_done,
                                                    const core::run_spec& spec, const std::vector<tcp::stream_role>& roles) {
    auto failed = side_rail_failures(side, spec, roles, "at the initiator");
    core::merge_rail_failures(failed, peer_rail_failures(peer_done, spec));
    if (failed.empty() || core::rails_survive(spec.rails, failed)) return failed;
    std::string all = "every rail of the point failed:";
    for (const auto& f : failed) all += fmt::format(" rail {}: {};", f.name, f.error);
    all.pop_back();
    throw session_error(all);
}

void run_rails::drop(const std::vector<core::rail_failure>& failed, std::size_t index, core::test_kind test, std::uint64_t size) {
    for (const auto& f : failed) {
        const auto point = fmt::format("point {} ({} {})", index, core::to_string(test), core::format_size(size));
        dropped.push_back({f.name, fmt::format("not measured: it failed in {}: {}", point, f.error)});
        if (warnings)
            warnings->push_back(fmt::format("rail {} failed in {}; its figures there are left out, and the later points "
                                            "were measured without it: {}",
                                            f.name, point, f.error));
    }
}

json run_rails::names() const {
    json out = json::array();
    for (const auto& f : dropped) out.push_back(f.name);
    return out;
}

}  // namespace meshperf::daemon::tcp_rails
