#include "daemon/runtime/inspect_metrics.hpp"

#include "core/prometheus.hpp"
#include "node/inspect_textfile.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

namespace meshperf::daemon {

using nlohmann::json;

namespace {

/// A finding's state as its exit code (core/check.hpp's order: OK 0, WARNING 1, CRITICAL 2,
/// UNKNOWN 3); an unreadable one is UNKNOWN.
int state_code(const json& finding) {
    const auto it = finding.find("state");
    const auto s = it != finding.end() && it->is_string() ? it->get<std::string>() : std::string();
    if (s == "OK") return 0;
    if (s == "WARNING") return 1;
    if (s == "CRITICAL") return 2;
    return 3;
}

/// Nagios order of badness: CRITICAL > WARNING > UNKNOWN > OK (core::worst).
int badness(int code) { return code == 2 ? 3 : code == 1 ? 2 : code == 3 ? 1 : 0; }

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
    const auto host = field(doc, "host");
    const auto findings = doc.value("findings", json::array());
    std::map<std::string, int> by_check;                            // check -> worst code
    std::map<std::tuple<std::string, std::string>, int> not_ok;     // check, subject -> worst code
    for (const auto& f : findings) {
        if (!f.is_object()) continue;
        const int code = state_code(f);
        const auto check = field(f, "check");
        auto [it, fresh] = by_check.emplace(check, code);
        if (!fresh && badness(code) > badness(it->second)) it->second = code;
        if (code == 0) continue;
        auto [jt, first] = not_ok.emplace(std::make_tuple(check, field(f, "subject")), code);
        if (!first && badness(code) > badness(jt->second)) jt->second = code;
    }
    for (const auto& [check, code] : by_check) e.add("meshperf_inspect_check_state", {{"host", host}, {"check", check}}, code);
    std::vector<std::pair<std::tuple<std::string, std::string>, int>> worst(not_ok.begin(), not_ok.end());
    std::stable_sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return badness(a.second) > badness(b.second); });
    if (worst.size() > max_exported_findings) worst.resize(max_exported_findings);
    for (const auto& [key, code] : worst)
        e.add("meshperf_inspect_finding_state",
              {{"host", host}, {"check", std::get<0>(key)}, {"subject", std::get<1>(key)}}, code);
    std::map<std::tuple<std::string, std::string>, double> loopback;  // one series per device and port
    for (const auto& l : doc.value("loopback", json::array()))
        if (l.is_object() && l.value("gbit_per_s", json()).is_number()) {
            const auto port = l.value("port", json());
            loopback[{field(l, "device"), port.is_number_unsigned() ? std::to_string(port.get<unsigned>()) : "1"}] =
                l["gbit_per_s"].get<double>() * 1e9;
        }
    for (const auto& [key, bps] : loopback)
        e.add("meshperf_rnic_loopback_bits_per_second", {{"host", host}, {"device", std::get<0>(key)}, {"port", std::get<1>(key)}},
              bps);
    return node::inspect_textfile(doc, unix_seconds) + e.render();
}

}  // namespace meshperf::daemon
