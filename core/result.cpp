#include "core/result.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/units.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace meshperf::core {

using nlohmann::json;

namespace {

void require_finite_nonneg(const char* what, double v) {
    if (!std::isfinite(v) || v < 0)
        throw insane_figure(fmt::format("{} is {} (must be finite and non-negative)", what, v));
}
void require_positive(const char* what, double v) {
    require_finite_nonneg(what, v);
    if (v <= 0) throw insane_figure(fmt::format("{} is {} (must be positive)", what, v));
}

void check_summary(const char* what, const summary& s) {
    if (s.count == 0) throw insane_figure(fmt::format("{} has no samples", what));
    const double seq[] = {s.min, s.p50, s.p90, s.p99, s.p999, s.max};
    for (double v : seq) require_positive(what, v);
    for (std::size_t i = 1; i < std::size(seq); ++i)
        if (seq[i] < seq[i - 1] * (1 - 1e-9))
            throw insane_figure(fmt::format("{} percentiles are out of order", what));
    require_finite_nonneg(what, s.stdev);
    if (s.mean < s.min * (1 - 1e-9) || s.mean > s.max * (1 + 1e-9))
        throw insane_figure(fmt::format("{} mean {} lies outside [min, max]", what, s.mean));
}

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-12; }

// Unit-bearing name of precision.block_values in JSON.
const char* block_values_key(test_kind t) { return t == test_kind::latency ? "block_rtt_ns" : "block_gbit_per_s"; }

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double num_from(const json& j, const char* key, double fallback = 0) {
    if (!j.contains(key) || j.at(key).is_null()) return fallback;
    return j.at(key).get<double>();
}

}  // namespace

void check_sane(const point_result& p) {
    if (p.size_bytes == 0) throw insane_figure("point has size 0");
    if (p.test == test_kind::latency) {
        if (!p.lat_ns || !p.rtt_ns) throw insane_figure("latency point without latency figures");
        check_summary("one-way latency", *p.lat_ns);
        check_summary("round-trip time", *p.rtt_ns);
        if (!close(p.lat_ns->p50 * 2, p.rtt_ns->p50, 1e-9))
            throw insane_figure("one-way latency is not half the round-trip time");
    } else {
        if (p.flows.empty()) throw insane_figure("bandwidth point without flows");
        double sum_gbit = 0, sum_msg = 0;
        for (const auto& f : p.flows) {
            require_positive("bytes received", static_cast<double>(f.bytes));
            require_positive("measured time", f.seconds);
            require_positive("bandwidth", f.gbit_per_s);
            require_positive("message rate", f.msg_per_s);
            const double expect_gbit = gbit_per_s(static_cast<double>(f.bytes), f.seconds);
            if (!close(expect_gbit, f.gbit_per_s, 1e-6))
                throw insane_figure(fmt::format("bandwidth {} Gbit/s disagrees with {} bytes in {} s", f.gbit_per_s, f.bytes, f.seconds));
            const double expect_msg = static_cast<double>(f.bytes) / static_cast<double>(p.size_bytes) / f.seconds;
            if (!close(expect_msg, f.msg_per_s, 1e-6))
                throw insane_figure("message rate disagrees with bytes, size and time");
            for (double s : f.stream_gbit_per_s) require_finite_nonneg("stream bandwidth", s);
            require_finite_nonneg("interval minimum", f.interval_min_gbit);
            require_finite_nonneg("interval maximum", f.interval_max_gbit);
            sum_gbit += f.gbit_per_s;
            sum_msg += f.msg_per_s;
        }
        if (!close(sum_gbit, p.gbit_per_s, 1e-9) || !close(sum_msg, p.msg_per_s, 1e-9))
            throw insane_figure("point totals are not the sum of their flows");
    }
    const auto nonneg_or_inf = [](const char* what, double v) {
        if (!(v >= 0)) throw insane_figure(fmt::format("{} is {} (must be non-negative, or +inf when unknown)", what, v));
    };
    nonneg_or_inf("precision", p.precision.achieved);
    nonneg_or_inf("within-sample precision", p.precision.samples_achieved);
    nonneg_or_inf("between-block precision", p.precision.blocks_achieved);
    nonneg_or_inf("drift precision", p.precision.drift_achieved);
    // A bandwidth block may be 0: no bytes arrived in its intervals (counters that advance in steps).
    for (double v : p.precision.block_values) require_finite_nonneg("block estimate", v);
    require_finite_nonneg("CPU use", p.cpu.local_percent);
    require_finite_nonneg("peer CPU use", p.cpu.remote_percent);
    require_finite_nonneg("duration", p.duration_s);
    if (p.tcp_counters) {
        bool moved = false;
        for (const auto& f : p.flows) moved |= f.bytes > 0;
        check_sane(*p.tcp_counters, moved);
    }
    for (const auto& r : p.rails) check_sane(r);
    if (p.link.initiator) check_sane(*p.link.initiator);
    if (p.link.peer) check_sane(*p.link.peer);
    for (const auto& r : p.rail_links) {
        if (r.link.initiator) check_sane(*r.link.initiator);
        if (r.link.peer) check_sane(*r.link.peer);
    }
}

json to_json(const summary& s) {
    return {{"count", s.count}, {"min", s.min},   {"p50", s.p50},   {"p90", s.p90},   {"p99", s.p99},
            {"p999", s.p999},   {"max", s.max},   {"mean", s.mean}, {"stdev", s.stdev}};
}

summary summary_from_json(const json& j) {
    summary s;
    s.count = j.value("count", std::uint64_t{0});
    s.min = num_from(j, "min");
    s.p50 = num_from(j, "p50");
    s.p90 = num_from(j, "p90");
    s.p99 = num_from(j, "p99");
    s.p999 = num_from(j, "p999");
    s.max = num_from(j, "max");
    s.mean = num_from(j, "mean");
    s.stdev = num_from(j, "stdev");
    return s;
}

json to_json(const host_info& h) {
    return {{"address", h.address}, {"hostname", h.hostname}, {"version", h.version},
            {"kernel", h.kernel},   {"cpu_model", h.cpu_model}, {"cpu_count", h.cpu_count}};
}

host_info host_info_from_json(const json& j) {
    host_info h;
    h.address = j.value("address", "");
    h.hostname = j.value("hostname", "");
    h.version = j.value("version", "");
    h.kernel = j.value("kernel", "");
    h.cpu_model = j.value("cpu_model", "");
    h.cpu_count = j.contains("cpu_count") ? static_cast<unsigned>(json_unsigned(j["cpu_count"], "cpu_count", UINT32_MAX)) : 0u;
    return h;
}

json to_json(const point_result& p) {
    json j;
    j["test"] = to_string(p.test);
    j["size_bytes"] = p.size_bytes;
    if (p.lat_ns) j["lat_ns"] = to_json(*p.lat_ns);
    if (p.rtt_ns) j["rtt_ns"] = to_json(*p.rtt_ns);
    if (p.test != test_kind::latency) {
        j["gbit_per_s"] = p.gbit_per_s;
        j["gbyte_per_s"] = gbyte_from_gbit(p.gbit_per_s);
        j["msg_per_s"] = p.msg_per_s;
        j["flows"] = json::array();
        for (const auto& f : p.flows) {
            j["flows"].push_back({{"direction", f.direction},
                                  {"bytes", f.bytes},
                                  {"seconds", f.seconds},
                                  {"gbit_per_s", f.gbit_per_s},
                                  {"msg_per_s", f.msg_per_s},
                                  {"interval_min_gbit_per_s", f.interval_min_gbit},
                                  {"interval_max_gbit_per_s", f.interval_max_gbit},
                                  {"streams_gbit_per_s", f.stream_gbit_per_s}});
        }
    }
    j["precision"] = {{"adaptive", p.precision.adaptive},
                      {"target", p.precision.adaptive ? json(p.precision.target) : json(nullptr)},
                      {"achieved", num_or_null(p.precision.achieved)},
                      {"met", p.precision.met},
                      {"batches", p.precision.batches}};
    if (p.precision.method) {
        auto& pr = j["precision"];
        pr["method"] = to_string(*p.precision.method);
        pr["blocks"] = p.precision.blocks;
        pr["samples_achieved"] = num_or_null(p.precision.samples_achieved);
        pr["blocks_achieved"] = num_or_null(p.precision.blocks_achieved);
        if (std::isfinite(p.precision.drift_achieved)) pr["drift_achieved"] = p.precision.drift_achieved;
        pr[block_values_key(p.test)] = p.precision.block_values;
    }
    j["cpu"] = {{"initiator_percent", p.cpu.local_percent}, {"peer_percent", p.cpu.remote_percent}};
    j["duration_s"] = p.duration_s;
    j["verified"] = p.verified;
    if (p.verified) {
        j["verified_bytes"] = p.verified_bytes;
        j["verified_by"] = p.verified_by;
    }
    j["warnings"] = p.warnings;
    if (p.placement) j["placement"] = to_json(*p.placement);
    if (!p.rails.empty()) {
        j["rails"] = json::array();
        for (const auto& r : p.rails) j["rails"].push_back(to_json(r));
    }
    if (p.tcp_counters) j["counters"]["tcp"] = to_json(*p.tcp_counters);
    if (!p.link.empty()) {
        json link = json::object();
        if (p.link.initiator) link["initiator"] = to_json(*p.link.initiator);
        if (p.link.peer) link["peer"] = to_json(*p.link.peer);
        j["counters"]["link"] = std::move(link);
    }
    if (!p.rail_links.empty()) {
        json rails = json::array();
        for (const auto& r : p.rail_links) {
            json one{{"rail", r.rail}};
            if (r.link.initiator) one["initiator"] = to_json(*r.link.initiator);
            if (r.link.peer) one["peer"] = to_json(*r.link.peer);
            rails.push_back(std::move(one));
        }
        j["counters"]["rails"] = std::move(rails);
    }
    return j;
}

point_result point_result_from_json(const json& j) {
    point_result p;
    p.test = parse_test_kind(j.at("test").get<std::string>());
    p.size_bytes = json_unsigned(j.at("size_bytes"), "size_bytes");
    if (j.contains("lat_ns")) p.lat_ns = summary_from_json(j.at("lat_ns"));
    if (j.contains("rtt_ns")) p.rtt_ns = summary_from_json(j.at("rtt_ns"));
    p.gbit_per_s = num_from(j, "gbit_per_s");
    p.msg_per_s = num_from(j, "msg_per_s");
    if (j.contains("flows"))
        for (const auto& f : j.at("flows")) {
            flow_figures ff;
            ff.direction = f.value("direction", "");
            ff.bytes = f.value("bytes", std::uint64_t{0});
            ff.seconds = num_from(f, "seconds");
            ff.gbit_per_s = num_from(f, "gbit_per_s");
            ff.msg_per_s = num_from(f, "msg_per_s");
            ff.interval_min_gbit = num_from(f, "interval_min_gbit_per_s");
            ff.interval_max_gbit = num_from(f, "interval_max_gbit_per_s");
            ff.stream_gbit_per_s = f.value("streams_gbit_per_s", std::vector<double>{});
            p.flows.push_back(std::move(ff));
        }
    if (j.contains("precision")) {
        const auto& pr = j.at("precision");
        p.precision.adaptive = pr.value("adaptive", false);
        p.precision.target = num_from(pr, "target");
        p.precision.achieved = num_from(pr, "achieved", std::numeric_limits<double>::infinity());
        p.precision.met = pr.value("met", false);
        p.precision.batches = pr.value("batches", std::uint64_t{0});
        // Fields added with the between-block interval; older results lack them.
        if (pr.contains("method") && pr.at("method").is_string())
            p.precision.method = parse_precision_method(pr.at("method").get<std::string>());
        p.precision.blocks = pr.value("blocks", std::uint64_t{0});
        p.precision.samples_achieved = num_from(pr, "samples_achieved", std::numeric_limits<double>::infinity());
        p.precision.blocks_achieved = num_from(pr, "blocks_achieved", std::numeric_limits<double>::infinity());
        p.precision.drift_achieved = num_from(pr, "drift_achieved", std::numeric_limits<double>::infinity());
        if (const char* key = block_values_key(p.test); pr.contains(key) && pr.at(key).is_array())
            p.precision.block_values = pr.at(key).get<std::vector<double>>();
    }
    if (j.contains("cpu")) {
        p.cpu.local_percent = num_from(j.at("cpu"), "initiator_percent");
        p.cpu.remote_percent = num_from(j.at("cpu"), "peer_percent");
    }
    p.duration_s = num_from(j, "duration_s");
    p.verified = j.value("verified", false);
    p.verified_bytes = j.value("verified_bytes", std::uint64_t{0});
    p.verified_by = j.value("verified_by", std::string{});
    p.warnings = j.value("warnings", std::vector<std::string>{});
    if (const auto r = j.find("rails"); r != j.end() && r->is_array())
        for (const auto& x : *r) p.rails.push_back(rail_figures_from_json(x));
    if (j.contains("placement") && !j.at("placement").is_null()) p.placement = point_placement_from_json(j.at("placement"));
    if (const auto c = j.find("counters"); c != j.end() && c->is_object()) {
        if (const auto t = c->find("tcp"); t != c->end() && !t->is_null()) p.tcp_counters = tcp_point_counters_from_json(*t);
        if (const auto l = c->find("link"); l != c->end() && l->is_object()) {
            if (const auto i = l->find("initiator"); i != l->end()) p.link.initiator = link_side_counters_from_json(*i);
            if (const auto r = l->find("peer"); r != l->end()) p.link.peer = link_side_counters_from_json(*r);
        }
        if (const auto rails = c->find("rails"); rails != c->end() && rails->is_array())
            for (const auto& x : *rails) {
                if (!x.is_object() || !x.contains("rail") || !x["rail"].is_string())
                    throw spec_error(fmt::format("counters.rails: each entry needs a \"rail\" name: {}", x.dump()));
                rail_link_counters r{x["rail"].get<std::string>(), {}};
                if (const auto i = x.find("initiator"); i != x.end()) r.link.initiator = link_side_counters_from_json(*i);
                if (const auto q = x.find("peer"); q != x.end()) r.link.peer = link_side_counters_from_json(*q);
                p.rail_links.push_back(std::move(r));
            }
    }
    return p;
}

json to_json(const sweep_drift& d) {
    json readings = json::array();
    for (const auto& r : d.readings) readings.push_back({{"after_point", r.after_point}, {"rtt_ns_p50", r.rtt_ns_p50}});
    json rechecks = json::array();
    for (const auto& r : d.rechecks)
        rechecks.push_back({{"size_bytes", r.size_bytes}, {"first_rtt_ns_p50", r.first_rtt_ns_p50}, {"again_rtt_ns_p50", r.again_rtt_ns_p50}});
    return {{"test", to_string(d.test)},
            {"size_bytes", d.size_bytes},
            {"readings", readings},
            {"rechecks", rechecks},
            {"relative_half_width", std::isfinite(d.relative_half_width) ? json(d.relative_half_width) : json(nullptr)}};
}

sweep_drift sweep_drift_from_json(const json& j) {
    try {
        sweep_drift d;
        d.test = parse_test_kind(j.at("test").get<std::string>());
        d.size_bytes = json_unsigned(j.at("size_bytes"), "drift.size_bytes");
        for (const auto& r : j.at("readings"))
            d.readings.push_back({json_unsigned(r.at("after_point"), "drift.readings[].after_point"), r.at("rtt_ns_p50").get<double>()});
        for (const auto& r : j.value("rechecks", json::array()))
            d.rechecks.push_back({json_unsigned(r.at("size_bytes"), "drift.rechecks[].size_bytes"), r.at("first_rtt_ns_p50").get<double>(),
                                  r.at("again_rtt_ns_p50").get<double>()});
        const auto& w = j.at("relative_half_width");
        d.relative_half_width = w.is_null() ? std::numeric_limits<double>::infinity() : w.get<double>();
        return d;
    } catch (const json::exception& e) {
        throw spec_error(fmt::format("drift: {}", e.what()));
    }
}

json to_json(const run_result& r) {
    json j;
    write_run_header(j, r, result_schema);
    j["initiator"] = to_json(r.initiator);
    j["peer"] = to_json(r.peer);
    j["spec"] = to_json(r.spec);
    j["points"] = json::array();
    for (const auto& p : r.points) j["points"].push_back(to_json(p));
    if (!r.drift.empty()) {
        j["drift"] = json::array();
        for (const auto& d : r.drift) j["drift"].push_back(to_json(d));
    }
    return j;
}

run_result run_result_from_json(const json& j) {
    if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() || j["schema"].get<std::string>() != result_schema)
        throw spec_error(fmt::format("not a meshperf run result (expected schema \"{}\")", result_schema));
    run_result r;
    r.id = j.value("id", "");
    r.state = recorded_state::from_text(j.value("state", ""));
    r.created_at = j.value("created_at", "");
    if (j.contains("finished_at") && j.at("finished_at").is_string()) r.finished_at = j.at("finished_at").get<std::string>();
    if (j.contains("initiator")) r.initiator = host_info_from_json(j.at("initiator"));
    if (j.contains("peer")) r.peer = host_info_from_json(j.at("peer"));
    if (j.contains("spec")) r.spec = run_spec_from_json(j.at("spec"));
    for (const auto& p : j.value("points", json::array())) r.points.push_back(point_result_from_json(p));
    if (j.contains("error") && j.at("error").is_string()) r.error = j.at("error").get<std::string>();
    if (j.contains("drift"))
        for (const auto& d : j.at("drift")) r.drift.push_back(sweep_drift_from_json(d));
    r.warnings = j.value("warnings", std::vector<std::string>{});
    return r;
}

std::string csv_header() {
    return "run_id,test,size_bytes,lat_ns_min,lat_ns_p50,lat_ns_p90,lat_ns_p99,lat_ns_p999,lat_ns_max,"
           "lat_ns_mean,lat_ns_stdev,rtt_ns_p50,samples,gbit_per_s,msg_per_s,flows,precision_achieved,"
           "precision_met,cpu_initiator_percent,cpu_peer_percent,verified,warnings,precision_method,precision_blocks";
}

std::string csv_quote(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) { if (c == '"') out += '"'; out += c; }
    return out + "\"";
}

namespace {
std::string g(double v) { return std::isfinite(v) ? fmt::format("{}", core::plain_number(v, 6)) : std::string(); }
}  // namespace

std::string to_csv_row(const run_result& r, const point_result& p) {
    std::string row = fmt::format("{},{},{}", csv_quote(r.id), to_string(p.test), p.size_bytes);
    if (p.lat_ns) {
        const auto& l = *p.lat_ns;
        row += fmt::format(",{},{},{},{},{},{},{},{},{},{}", g(l.min), g(l.p50), g(l.p90), g(l.p99), g(l.p999),
                           g(l.max), g(l.mean), g(l.stdev), g(p.rtt_ns->p50), l.count);
    } else {
        row += ",,,,,,,,,,";
    }
    if (p.test != test_kind::latency) {
        std::string flows;
        for (const auto& f : p.flows) {
            if (!flows.empty()) flows += ';';
            flows += fmt::format("{}={}", f.direction, core::plain_number(f.gbit_per_s, 6));
        }
        row += fmt::format(",{},{},{}", g(p.gbit_per_s), g(p.msg_per_s), csv_quote(flows));
    } else {
        row += ",,,";
    }
    std::string warnings;
    for (const auto& w : p.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    row += fmt::format(",{},{},{},{},{},{}", g(p.precision.achieved), p.precision.met ? "true" : "false",
                       g(p.cpu.local_percent), g(p.cpu.remote_percent), p.verified ? "true" : "false",
                       csv_quote(warnings));
    // Appended after the original columns so readers that index columns keep working.
    if (p.precision.method) row += fmt::format(",{},{}", to_string(*p.precision.method), p.precision.blocks);
    else row += ",,";
    return row;
}

}  // namespace meshperf::core
