#include "client/render/matrix_json.hpp"
#include "core/json_text.hpp"
#include "core/figure_text.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// Stands for links[] in the document around the links; replaced by them when written.
constexpr const char* links_placeholder = "meshperf-matrix-links-are-written-here";

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

/// The document without its links, links[] a placeholder string.
json document_around_links(const matrix_document& d) {
    json doc = d.meta;
    json verdict = analysis::to_json_without_links(d.a, d.names);
    for (auto& [k, v] : verdict.items()) doc[k] = std::move(v);
    doc["links"] = links_placeholder;
    if (d.topo && d.groups) {
        doc["topology"] = analysis::to_json(*d.groups, d.topo->group_names);
        doc["topology"]["key"] = d.topo->key;
        doc["topology"]["groups"] = d.topo->group_names;
        doc["slow_uplinks"] = json::array();
        for (const auto& u : d.groups->uplinks)
            if (u.bad) doc["slow_uplinks"].push_back(d.topo->group_names[u.group]);
    }
    return doc;
}

/// `text` with `indent` spaces before each of its lines.
std::string indented(const std::string& text, std::size_t indent) {
    const std::string pad(indent, ' ');
    std::string out = pad;
    out.reserve(text.size() + text.size() / 8);
    for (char c : text) {
        out += c;
        if (c == '\n') out += pad;
    }
    return out;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return q + "\"";
}

std::string opt_number(std::optional<double> v) { return v ? core::plain_number(*v, 6) : ""; }  // never 1e-05

}  // namespace

json matrix_link_json(const matrix_document& d, std::size_t i) {
    const auto& v = d.a.links[i];
    json l = analysis::to_json(v, d.names);
    l["run_ids"] = d.links.run_ids(i);
    l["retested"] = d.links.retested(i);
    if (const auto first = d.links.first(i)) {
        l["first"] = {{"reachable", first->reachable},
                      {"gbit_per_s", opt(first->gbit_per_s)},
                      {"lat_us", opt(first->lat_us)},
                      {"error", first->error}};
    }
    if (d.groups && v.bad && v.link.reachable) {
        const auto cause = d.groups->cause[i];
        l["cause"] = analysis::to_string(cause);
        if (cause == analysis::link_cause::host) l["cause_host"] = d.names[d.groups->cause_host[i]];
        if (cause == analysis::link_cause::uplink && d.topo) l["cause_group"] = d.topo->group_names[d.groups->cause_host[i]];
    }
    return l;
}

void write_matrix_json(const matrix_document& d, const text_sink& out) {
    const std::string around = core::json_text(document_around_links(d), 2);
    // The placeholder is a top-level value: "links" at an indent of 2 spaces.
    const std::string marker = fmt::format("\n  \"links\": \"{}\"", links_placeholder);
    const auto at = around.find(marker);
    if (at == std::string::npos) throw std::logic_error("matrix document: links[] placeholder not found");
    const auto value_at = at + marker.size() - std::string(links_placeholder).size() - 2;  // its opening quote
    out(std::string_view(around).substr(0, value_at));
    if (d.a.links.empty()) {
        out("[]");
    } else {
        out("[\n");
        for (std::size_t i = 0; i < d.a.links.size(); ++i) {
            // An element of links[] sits at an indent of 4 spaces.
            std::string text = indented(core::json_text(matrix_link_json(d, i), 2), 4);
            text += i + 1 < d.a.links.size() ? ",\n" : "\n";
            out(text);
        }
        out("  ]");
    }
    out(std::string_view(around).substr(at + marker.size()));
    out("\n");
}

void write_matrix_csv(const matrix_document& d, const text_sink& out) {
    out("from,to,reachable,gbit_per_s,lat_us,bandwidth_ratio,latency_ratio,bad,retested,reason,error\n");
    for (std::size_t i = 0; i < d.a.links.size(); ++i) {
        const auto& v = d.a.links[i];
        out(fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(d.names[v.link.from]), csv_field(d.names[v.link.to]),
                        v.link.reachable ? "true" : "false", opt_number(v.link.gbit_per_s), opt_number(v.link.lat_us),
                        opt_number(v.bandwidth_ratio), opt_number(v.latency_ratio), v.bad ? "true" : "false",
                        d.links.retested(i) ? "true" : "false", csv_field(v.reason), csv_field(v.link.error)));
    }
}

}  // namespace meshperf::client
