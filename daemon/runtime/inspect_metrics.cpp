#include "daemon/runtime/inspect_metrics.hpp"

#include "core/units.hpp"
#include "core/check.hpp"
#include "core/prometheus.hpp"
#include "node/inspect_textfile.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

namespace meshperf::daemon {

using nlohmann::json;

namespace {

/// A finding's state; an unreadable one is UNKNOWN.
core::check_state state_of(const json& finding) {
    const auto it = finding.find("state");
    const auto s = it != finding.end() && it->is_string() ? it->get<std::string>() : std::string();
    for (auto st : {core::check_state::ok, core::check_state::warning, core::check_state::critical})
        if (s == core::to_string(st)) return st;
    return core::check_state::unknown;
}

/// Whether `a` is worse than `b` in Nagios' order (core::worst: CRITICAL > WARNING > UNKNOWN > OK).
bool worse(core::check_state a, core::check_state b) { return a != b && core::worst(a, b) == a; }

std::string field(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string inspection_exposition(const json& doc, double unix_seconds) {
    using core::metric_type;
    core::exposition e;
    e.declare("meshperf_inspect_check_state", metric_type::gauge,
              "Worst state of each inspect check (pcie_link, acs, affinity, ...) as an exit code: 0 OK, 1 WARNING, "
              "2 CRITICAL, 3 UNKNOWN");
    e.declare("meshperf_inspect_finding_state", metric_type::gauge,
              "Each inspect finding that is not OK (at most 32, worst first) as an exit code: 1 WARNING, 2 CRITICAL, "
              "3 UNKNOWN");
    e.declare("meshperf_rnic_loopback_bits_per_second", metric_type::gauge,
              "RDMA loopback of each device writing to itself, when the inspection measured it");
    e.declare("meshperf_gpu_copy_bytes_per_second", metric_type::gauge,
              "Host<->GPU copy rate of each GPU with every GPU copying at once (inspect --gpu-copies), when the inspection "
              "measured it");
    const auto host = field(doc, "host");
    const auto findings = doc.value("findings", json::array());
    std::map<std::string, core::check_state> by_check;                         // check -> worst
    std::map<std::tuple<std::string, std::string>, core::check_state> not_ok;  // check, subject -> worst
    for (const auto& f : findings) {
        if (!f.is_object()) continue;
        const auto st = state_of(f);
        const auto check = field(f, "check");
        auto [it, fresh] = by_check.emplace(check, st);
        if (!fresh && worse(st, it->second)) it->second = st;
        if (st == core::check_state::ok) continue;
        auto [jt, first] = not_ok.emplace(std::make_tuple(check, field(f, "subject")), st);
        if (!first && worse(st, jt->second)) jt->second = st;
    }
    for (const auto& [check, st] : by_check)
        e.add("meshperf_inspect_check_state", {{"host", host}, {"check", check}}, core::exit_code(st));
    std::vector<std::pair<std::tuple<std::string, std::string>, core::check_state>> worst(not_ok.begin(), not_ok.end());
    std::stable_sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return worse(a.second, b.second); });
    if (worst.size() > max_exported_findings) worst.resize(max_exported_findings);
    for (const auto& [key, st] : worst)
        e.add("meshperf_inspect_finding_state",
              {{"host", host}, {"check", std::get<0>(key)}, {"subject", std::get<1>(key)}}, core::exit_code(st));
    std::map<std::tuple<std::string, std::string>, double> loopback;  // one series per device and port
    for (const auto& l : doc.value("loopback", json::array()))
        if (l.is_object() && l.value("gbit_per_s", json()).is_number() && std::isfinite(l["gbit_per_s"].get<double>()) &&
            l["gbit_per_s"].get<double>() > 0) {  // a figure that is not positive and finite gets no series
            const auto port = l.value("port", json());
            loopback[{field(l, "device"), port.is_number_unsigned() ? std::to_string(port.get<unsigned>()) : "1"}] =
                core::bit_per_s_from_gbit(l["gbit_per_s"].get<double>());
        }
    for (const auto& [key, bps] : loopback)
        e.add("meshperf_rnic_loopback_bits_per_second", {{"host", host}, {"device", std::get<0>(key)}, {"port", std::get<1>(key)}},
              bps);
    std::map<std::tuple<std::string, std::string>, double> copies;  // one series per GPU and direction
    for (const auto& g : doc.value("gpu_copies", json::array()))
        if (g.is_object() && g.value("gb_per_s", json()).is_number() && std::isfinite(g["gb_per_s"].get<double>()) &&
            g["gb_per_s"].get<double>() > 0)
            copies[{field(g, "gpu"), field(g, "copy")}] = core::bytes_per_s_from_gbyte(g["gb_per_s"].get<double>());
    for (const auto& [key, bytes_per_s] : copies)
        e.add("meshperf_gpu_copy_bytes_per_second", {{"host", host}, {"gpu", std::get<0>(key)}, {"copy", std::get<1>(key)}},
              bytes_per_s);
    return node::inspect_textfile(doc, unix_seconds) + e.render();
}

}  // namespace meshperf::daemon
