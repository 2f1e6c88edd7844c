#include "core/check_figures.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"

#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

std::vector<check_figure> figures_of(const run_result& run) {
    std::vector<check_figure> out;
    for (const point_result& p : run.points) {
        check_figure f;
        f.size_bytes = p.size_bytes;
        if (p.test == test_kind::latency) {
            if (!p.lat_ns) continue;
            f.kind = figure_kind::latency;
            f.value = p.lat_ns->p50 / 1000.0;
        } else if (p.test == test_kind::bandwidth) {
            f.kind = figure_kind::bandwidth;
            f.value = p.gbit_per_s;
        } else {
            continue;
        }
        if (std::isfinite(f.value) && f.value > 0) out.push_back(f);
    }
    return out;
}

std::string perfdata_label_of(std::string_view text) {
    std::string out;
    for (char ch : text) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    return out;
}

std::vector<counter_verdict> counter_verdicts_of(const run_result& run, const counter_thresholds& t) {
    std::vector<counter_verdict> out;
    for (const auto& p : run.points) {
        const auto point = fmt::format("{} {}", format_size(p.size_bytes), to_string(p.test));
        const auto size = format_size_short(p.size_bytes);
        if (p.tcp_counters)
            if (const auto f = judge_tcp_counters(*p.tcp_counters, t))
                out.push_back({f->state, fmt::format("TCP retransmits: {} at {}", f->reason, point),
                               perfdata_label_of(fmt::format("retransmit_share_{}_{}", to_string(p.test), size)),
                               p.tcp_counters->retransmit_share()});
        const auto add = [&](const link_counters& link, const std::string& rail) {
            for (const auto& f : judge_link_counters(link, t))
                out.push_back({f.state, fmt::format("{}{} {}: {} at {}", rail.empty() ? "" : "rail " + rail + ": ", f.side, f.where,
                                                    f.reason, point),
                               perfdata_label_of(fmt::format("{}_{}_{}_{}_{}", f.side, f.where, f.counter, to_string(p.test), size)),
                               static_cast<double>(f.delta)});
        };
        add(p.link, "");
        for (const auto& r : p.rail_links) add(r.link, r.rail);
    }
    return out;
}

json to_json(const check_figure& f) {
    json j{{"test", std::string(to_string(f.kind))}, {"size_bytes", f.size_bytes}};
    j[f.kind == figure_kind::bandwidth ? "gbit_per_s" : "lat_us"] = f.value;
    return j;
}

check_figure check_figure_from_json(const json& j) {
    if (!j.is_object()) throw spec_error(fmt::format("a baseline figure must be an object, not {}", j.dump()));
    check_figure f;
    // Not j.value("test", ...): it throws json::type_error when "test" is not a string, and
    // callers (PUT /v1/baselines) expect spec_error only (found by the http_request fuzz target).
    const auto test = j.contains("test") && j["test"].is_string() ? j["test"].get<std::string>() : std::string();
    const char* field = nullptr;
    if (test == "bandwidth") {
        f.kind = figure_kind::bandwidth;
        field = "gbit_per_s";
    } else if (test == "latency") {
        f.kind = figure_kind::latency;
        field = "lat_us";
    } else {
        throw spec_error(fmt::format("a baseline figure needs \"test\": \"latency\" or \"bandwidth\", not {}", j.dump()));
    }
    if (!j.contains("size_bytes") || !j["size_bytes"].is_number_integer() ||
        (j["size_bytes"].is_number_unsigned() ? j["size_bytes"].get<std::uint64_t>() == 0 : j["size_bytes"].get<std::int64_t>() <= 0))
        throw spec_error(fmt::format("a baseline figure needs a positive integer \"size_bytes\": {}", j.dump()));
    f.size_bytes = j["size_bytes"].get<std::uint64_t>();
    if (!j.contains(field) || !j[field].is_number() || !(j[field].get<double>() > 0) || !std::isfinite(j[field].get<double>()))
        throw spec_error(fmt::format("a {} baseline figure needs a positive number \"{}\": {}", test, field, j.dump()));
    f.value = j[field].get<double>();
    return f;
}

std::vector<check_figure> baseline_figures_from_json(const json& doc, const std::string& peer, const std::string& transport) {
    if (!doc.is_object()) throw spec_error("a baseline file must hold a JSON object");
    if (doc.contains("baselines")) {
        if (!doc["baselines"].is_array()) throw spec_error("\"baselines\" must be an array");
        std::vector<check_figure> out;
        for (const json& e : doc["baselines"]) {
            if (e.is_object() && e.contains("peer") && e["peer"] != peer) continue;
            if (e.is_object() && e.contains("transport") && e["transport"] != transport) continue;
            out.push_back(check_figure_from_json(e));
        }
        return out;
    }
    if (doc.value("schema", std::string()) == result_schema) return figures_of(run_result_from_json(doc));
    throw spec_error(fmt::format("not a baseline: expected {{\"baselines\": [...]}} ({}) or a run result ({})", baselines_schema,
                                 result_schema));
}

}  // namespace meshperf::core
