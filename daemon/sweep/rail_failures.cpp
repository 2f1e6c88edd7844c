#include "daemon/sweep/rail_failures.hpp"

#include "core/rail_spec.hpp"
#include "core/sizes.hpp"
#include "daemon/session/session_protocol.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon::point_rails {

using nlohmann::json;

namespace {

bool names_rail(const core::run_spec& spec, const std::string& name) {
    return std::any_of(spec.rails.begin(), spec.rails.end(), [&](const core::rail_pair& r) { return r.name == name; });
}

bool is_failed(const std::vector<core::rail_failure>& failed, const std::string& name) {
    return std::any_of(failed.begin(), failed.end(), [&](const core::rail_failure& f) { return f.name == name; });
}

}  // namespace

core::run_spec point_spec(const core::run_spec& run, const std::vector<core::rail_failure>& dropped) {
    core::run_spec s = run;
    std::erase_if(s.rails, [&](const core::rail_pair& r) { return is_failed(dropped, r.name); });
    return s;
}

bool tolerates_rail_failures(const core::run_spec& spec, core::test_kind test) {
    return spec.rails.size() >= 2 && test != core::test_kind::latency && !spec.iterations;
}

bool tolerant_by_begin(const json& begin, const core::run_spec& spec, core::test_kind test) {
    return begin.contains("rail_failures") && begin.at("rail_failures") == true && tolerates_rail_failures(spec, test);
}

json to_json(const std::vector<core::rail_failure>& failed) {
    json out = json::array();
    for (const auto& f : failed) out.push_back({{"name", f.name}, {"error", f.error}});
    return out;
}

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

std::vector<bool> streams_on(const std::vector<core::rail_failure>& failed, const core::run_spec& spec, std::size_t streams,
                             std::size_t per_rail) {
    std::vector<bool> out(streams, false);
    if (per_rail == 0) return out;
    for (std::size_t i = 0; i < streams; ++i) {
        const auto rail = core::rail_of_stream(i, static_cast<std::uint32_t>(per_rail));
        out[i] = rail < spec.rails.size() && is_failed(failed, spec.rails[rail].name);
    }
    return out;
}

std::vector<core::rail_failure> with_a_survivor(std::vector<core::rail_failure> failed, const core::run_spec& spec) {
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
                                            "were measured without it unless a warning below says it answered again: {}",
                                            f.name, point, f.error));
    }
}

void run_rails::add_begin_fields(json& begin, bool tolerant) const {
    if (tolerant) begin["rail_failures"] = true;  // the peer may then report a failed rail instead of failing the point
    if (dropped.empty()) return;
    json names = json::array();
    for (const auto& f : dropped) names.push_back(f.name);
    begin["rails_dropped"] = std::move(names);
}

std::vector<std::string> run_rails::readmit(const core::run_spec& run, std::size_t index, core::test_kind test,
                                            std::uint64_t size, const std::function<bool(const core::rail_pair&)>& answers) {
    std::vector<std::string> back;
    std::erase_if(dropped, [&](const core::rail_failure& f) {
        const auto rail = std::find_if(run.rails.begin(), run.rails.end(), [&](const core::rail_pair& r) { return r.name == f.name; });
        if (rail == run.rails.end() || !answers(*rail)) return false;
        back.push_back(f.name);
        if (warnings)
            warnings->push_back(fmt::format("rail {} answered again before point {} ({} {}) and was measured again from there",
                                            f.name, index, core::to_string(test), core::format_size(size)));
        return true;
    });
    return back;
}

}  // namespace meshperf::daemon::point_rails
