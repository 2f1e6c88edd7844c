#include "client/support/result_files.hpp"
#include "client/support/cli_wording.hpp"

#include "client/support/daemon_client.hpp"
#include "core/collective/result.hpp"
#include "core/error.hpp"
#include "core/json_fields.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

namespace meshperf::client {

using nlohmann::json;

namespace {

const json& field(const json& j, const char* name, const char* where) {
    if (!j.is_object() || !j.contains(name))
        throw core::spec_error(fmt::format("matrix JSON: {} has no \"{}\"", where, name));
    return j.at(name);
}

std::optional<double> opt_number(const json& j, const char* name) {
    if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
    if (!j.at(name).is_number()) throw core::spec_error(fmt::format("matrix JSON: \"{}\" is not a number", name));
    const double v = j.at(name).get<double>();
    if (!std::isfinite(v)) throw core::spec_error(fmt::format("matrix JSON: \"{}\" is not finite", name));
    return v;
}

}  // namespace

report_matrix matrix_from_json(const json& doc) {
    report_matrix m;
    auto& a = m.analysis;
    const auto& hosts = field(doc, "hosts", "the document");
    if (!hosts.is_array() || hosts.empty()) throw core::spec_error("matrix JSON: \"hosts\" must be a non-empty array");
    a.host_count = hosts.size();
    std::map<std::string, std::size_t> index;
    for (const auto& h : hosts) {
        const auto name = field(h, "host", "a host").get<std::string>();
        index.emplace(name, m.hosts.size());
        m.hosts.push_back(name);
        analysis::host_tally t;
        t.measured = h.value("measured_links", std::size_t{0});
        t.bad = h.value("bad_links", std::size_t{0});
        t.unreachable = h.value("unreachable_links", std::size_t{0});
        t.suspect = h.value("suspect", false);
        t.unreachable_host = h.value("unreachable", false);
        a.hosts.push_back(t);
    }
    if (doc.contains("host_count") && core::json_unsigned(doc["host_count"], "host_count") != a.host_count)
        throw core::spec_error("matrix JSON: \"host_count\" does not match the hosts listed");
    auto host = [&](const json& name) {
        const auto it = index.find(name.get<std::string>());
        if (it == index.end())
            throw core::spec_error(fmt::format("matrix JSON: link names host \"{}\", which is not in \"hosts\"", name.get<std::string>()));
        return it->second;
    };
    if (const auto o = doc.value("options", json::object()); o.is_object()) {
        a.options.bandwidth_fraction = o.value("bandwidth_fraction", a.options.bandwidth_fraction);
        a.options.latency_multiple = o.value("latency_multiple", a.options.latency_multiple);
        a.options.suspect_fraction = o.value("suspect_fraction", a.options.suspect_fraction);
    }
    std::size_t with_bw = 0, with_lat = 0;
    for (const auto& l : field(doc, "links", "the document")) {
        analysis::link_verdict v;
        v.link.from = host(field(l, "from", "a link"));
        v.link.to = host(field(l, "to", "a link"));
        v.link.reachable = l.value("reachable", true);
        v.link.gbit_per_s = opt_number(l, "gbit_per_s");
        v.link.lat_us = opt_number(l, "lat_us");
        v.link.error = l.value("error", "");
        v.bad = l.value("bad", false);
        v.reason = l.value("reason", "");
        // Documents written before each rule had its flag: the reason names the rules broken.
        v.bandwidth_bad = v.link.reachable && l.value("bandwidth_bad", v.bad && v.reason.find("bandwidth ") != std::string::npos);
        v.latency_bad = v.link.reachable && l.value("latency_bad", v.bad && v.reason.find("latency ") != std::string::npos);
        v.bandwidth_ratio = opt_number(l, "bandwidth_ratio");
        v.latency_ratio = opt_number(l, "latency_ratio");
        if (v.link.reachable) {
            with_bw += v.link.gbit_per_s.has_value();
            with_lat += v.link.lat_us.has_value();
        }
        a.links.push_back(std::move(v));
    }
    auto stats = [&](const char* key, std::size_t count) -> std::optional<analysis::robust_stats> {
        const auto median = opt_number(doc.value("median", json::object()), key);
        if (!median) return std::nullopt;
        return analysis::robust_stats{count, *median, opt_number(doc.value("mad", json::object()), key).value_or(0)};
    };
    a.bandwidth = stats("gbit_per_s", with_bw);
    a.latency = stats("lat_us", with_lat);
    // Documents written before the reference was reported were judged against the median.
    const auto ref = doc.value("reference", json::object());
    a.reference_rule = ref.is_object() ? ref.value("rule", std::string("median")) : std::string("median");
    a.bandwidth_reference = opt_number(ref, "gbit_per_s");
    a.latency_reference = opt_number(ref, "lat_us");
    if (!a.bandwidth_reference && a.bandwidth) a.bandwidth_reference = a.bandwidth->median;
    if (!a.latency_reference && a.latency) a.latency_reference = a.latency->median;
    for (const auto& s : doc.value("suspects", json::array())) a.suspects.push_back(host(s));
    for (const auto& s : doc.value("unreachable", json::array())) a.unreachable.push_back(host(s));
    return m;
}

json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw client_error(exit_usage, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    std::stringstream buf;
    buf << in.rdbuf();
    try {
        return json::parse(buf.str());
    } catch (const json::exception& e) {
        throw client_error(exit_usage, fmt::format("{} is not JSON: {}", path, json_error_text(e.what())));
    }
}

loaded_file load_result_file(const std::string& path) {
    const auto doc = read_json_file(path);
    const auto schema = doc.is_object() ? doc.value("schema", "") : std::string();
    const bool run = schema == core::result_schema || (schema.empty() && doc.is_object() && doc.contains("points"));
    const bool matrix = schema == "meshperf.matrix/1" || (schema.empty() && doc.is_object() && doc.contains("links") && doc.contains("host_count"));
    try {
        if (run) return {path, core::run_result_from_json(doc)};
        if (matrix) {
            auto m = matrix_from_json(doc);
            m.title = fmt::format("Cluster matrix, {} hosts ({})", m.hosts.size(), path);
            return {path, std::move(m)};
        }
    } catch (const std::exception& e) {
        throw client_error(exit_usage, fmt::format("{}: {}", path, e.what()));
    }
    if (schema == core::collective_result_schema)
        throw client_error(exit_usage, fmt::format("{} is a collective result (meshperf collective): this command reads sweep "
                                                   "results and matrices; see it with meshperf show {}, or draw it "
                                                   "alone with meshperf plot {}",
                                                   path, path, path));
    throw client_error(exit_usage, fmt::format("{} is neither a meshperf run result (meshperf sweep/show --format json) nor a "
                                               "matrix (meshperf matrix --format json){}",
                                               path, schema.empty() ? "" : " (schema \"" + schema + "\")"));
}

}  // namespace meshperf::client
