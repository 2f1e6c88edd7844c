// The JSON and CSV forms of core/collective/result.hpp (docs/result-schema.md, "Collective results").
#include "core/collective/result.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace meshperf::core {

using nlohmann::json;

namespace {

const json& field(const json& j, std::string_view key, std::string_view in) {
    if (!j.is_object()) throw spec_error(fmt::format("{} must be a JSON object, not {}", in, j.type_name()));
    const auto it = j.find(key);
    if (it == j.end()) throw spec_error(fmt::format("{} has no field '{}'", in, key));
    return *it;
}
double number(const json& j, std::string_view key, std::string_view in) {
    const auto& v = field(j, key, in);
    if (!v.is_number()) throw spec_error(fmt::format("{}: field '{}' must be a number, not {}", in, key, v.type_name()));
    return v.get<double>();
}
std::uint64_t whole(const json& j, std::string_view key, std::string_view in, std::uint64_t max = UINT64_MAX) {
    return json_unsigned(field(j, key, in), fmt::format("{}.{}", in, key), max);
}
unsigned rank_field(const json& j, std::string_view key, std::string_view in) {
    return static_cast<unsigned>(whole(j, key, in, UINT32_MAX));
}
std::string text(const json& j, std::string_view key, std::string_view in) {
    const auto& v = field(j, key, in);
    if (!v.is_string()) throw spec_error(fmt::format("{}: field '{}' must be a string, not {}", in, key, v.type_name()));
    return v.get<std::string>();
}
std::vector<double> numbers(const json& j, std::string_view key, std::string_view in) {
    const auto& v = field(j, key, in);
    if (!v.is_array()) throw spec_error(fmt::format("{}: field '{}' must be an array of numbers", in, key));
    std::vector<double> out;
    for (const auto& x : v) {
        if (!x.is_number()) throw spec_error(fmt::format("{}: field '{}' must be an array of numbers", in, key));
        out.push_back(x.get<double>());
    }
    return out;
}
// A field that may be null or absent: nullptr then.
const json* optional_field(const json& j, std::string_view key) {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

collective_link link_from_json(const json& j) {
    constexpr std::string_view in = "collective link";
    collective_link l{rank_field(j, "from", in), rank_field(j, "to", in), whole(j, "bytes", in), number(j, "send_s", in),
                      number(j, "gbit_per_s", in), std::nullopt, std::nullopt};
    // Absent in older results and where the sender's socket was not read.
    if (const auto* r = optional_field(j, "retransmits")) l.retransmits = json_unsigned(*r, "collective link.retransmits");
    if (const auto* s = optional_field(j, "segments_sent")) l.segments_sent = json_unsigned(*s, "collective link.segments_sent");
    return l;
}

// What a stored result is read under: no daemon's limits (see collective_result_from_json).
collective_limits no_limits() {
    collective_limits lim;
    lim.max_ranks = UINT32_MAX;
    lim.run.max_iterations = UINT64_MAX;
    lim.run.max_duration_s = std::numeric_limits<double>::max();
    lim.run.max_bytes_per_point = UINT64_MAX;
    return lim;
}

std::string g(double v) { return fmt::format("{}", core::plain_number(v, 6)); }
std::string us(double seconds) { return g(seconds * 1e6); }

}  // namespace

json to_json(const collective_link& l) {
    json j = {{"name", to_string(l)}, {"from", l.from}, {"to", l.to}, {"bytes", l.bytes}, {"send_s", l.send_s}, {"gbit_per_s", l.gbit_per_s}};
    if (l.retransmits) j["retransmits"] = *l.retransmits;
    if (l.segments_sent) j["segments_sent"] = *l.segments_sent;
    return j;
}

json to_json(const collective_point& p) {
    json j;
    j["op"] = to_string(p.op);
    j["algo"] = to_string(p.algo);
    j["ranks"] = p.ranks;
    j["dtype"] = to_string(p.element);
    j["redop"] = redop_name(p.op);
    j["size_bytes"] = p.size_bytes;
    j["count"] = p.count;
    j["iterations"] = p.iterations;
    j["time_s"] = p.time_s;
    j["time_min_s"] = p.time_min_s;
    j["time_p50_s"] = p.time_p50_s;
    j["time_max_s"] = p.time_max_s;
    j["algbw_gbyte_per_s"] = p.algbw_gbyte_per_s;
    j["busbw_gbyte_per_s"] = p.busbw_gbyte_per_s;
    j["algbw_gbit_per_s"] = p.algbw_gbit_per_s;
    j["busbw_gbit_per_s"] = p.busbw_gbit_per_s;
    j["wrong"] = p.wrong ? json(*p.wrong) : json(nullptr);
    j["rank_time_s"] = p.rank_time_s;
    j["rank_spread"] = {{"min_s", p.spread.min_s}, {"max_s", p.spread.max_s}, {"max_over_min", p.spread.max_over_min}};
    j["slowest_rank"] = p.slowest_rank;
    j["links"] = json::array();
    for (const auto& l : p.links) j["links"].push_back(to_json(l));
    j["slowest_link"] = p.slowest_link ? to_json(*p.slowest_link) : json(nullptr);
    if (p.incast)
        j["incast"] = {{"receiver", incast_receiver},
                       {"sender_gbit_per_s", p.incast->sender_gbit_per_s},
                       {"total_gbit_per_s", p.incast->total_gbit_per_s},
                       {"fairness", p.incast->fairness}};
    else
        j["incast"] = nullptr;
    if (std::any_of(p.rank_counters.begin(), p.rank_counters.end(), [](const auto& c) { return c.has_value(); })) {
        json ranks = json::array();
        for (const auto& c : p.rank_counters) ranks.push_back(c ? to_json(*c) : json(nullptr));
        j["counters"] = {{"ranks", std::move(ranks)}};
    }
    if (std::any_of(p.rank_tcp_counters.begin(), p.rank_tcp_counters.end(), [](const auto& c) { return c.has_value(); })) {
        json ranks = json::array();
        for (const auto& c : p.rank_tcp_counters) ranks.push_back(c ? to_json(*c) : json(nullptr));
        j["rank_tcp_counters"] = std::move(ranks);
    }
    return j;
}

collective_point collective_point_from_json(const json& j) {
    constexpr std::string_view in = "collective point";
    collective_point p;
    p.op = parse_collective_op(text(j, "op", in));
    p.algo = parse_collective_algo(text(j, "algo", in));
    p.ranks = rank_field(j, "ranks", in);
    p.element = parse_dtype(text(j, "dtype", in));
    p.size_bytes = whole(j, "size_bytes", in);
    p.count = whole(j, "count", in);
    p.iterations = whole(j, "iterations", in);
    p.time_s = number(j, "time_s", in);
    p.time_min_s = number(j, "time_min_s", in);
    p.time_p50_s = number(j, "time_p50_s", in);
    p.time_max_s = number(j, "time_max_s", in);
    p.algbw_gbyte_per_s = number(j, "algbw_gbyte_per_s", in);
    p.busbw_gbyte_per_s = number(j, "busbw_gbyte_per_s", in);
    p.algbw_gbit_per_s = number(j, "algbw_gbit_per_s", in);
    p.busbw_gbit_per_s = number(j, "busbw_gbit_per_s", in);
    if (const auto* w = optional_field(j, "wrong")) p.wrong = json_unsigned(*w, "collective point.wrong");
    p.rank_time_s = numbers(j, "rank_time_s", in);
    const auto& spread = field(j, "rank_spread", in);
    p.spread = {number(spread, "min_s", "rank_spread"), number(spread, "max_s", "rank_spread"),
                number(spread, "max_over_min", "rank_spread")};
    p.slowest_rank = rank_field(j, "slowest_rank", in);
    const auto& links = field(j, "links", in);
    if (!links.is_array()) throw spec_error("collective point: field 'links' must be an array");
    for (const auto& l : links) p.links.push_back(link_from_json(l));
    if (const auto* l = optional_field(j, "slowest_link")) p.slowest_link = link_from_json(*l);
    if (const auto* i = optional_field(j, "incast")) {
        constexpr std::string_view inc = "incast";
        if (whole(*i, "receiver", inc) != incast_receiver)
            throw spec_error(fmt::format("incast: the receiver must be rank {}", incast_receiver));
        p.incast = incast_figures{numbers(*i, "sender_gbit_per_s", inc), number(*i, "total_gbit_per_s", inc),
                                  number(*i, "fairness", inc)};
    }
    if (const auto* c = optional_field(j, "counters")) {
        const auto* ranks = optional_field(*c, "ranks");
        if (!ranks || !ranks->is_array() || ranks->size() != p.ranks)
            throw spec_error("collective point: 'counters.ranks' must be an array with one entry per rank");
        for (const auto& r : *ranks)
            p.rank_counters.push_back(r.is_null() ? std::nullopt : std::optional(link_side_counters_from_json(r)));
    }
    // Absent in older results, over RDMA and where no rank could read its sockets.
    if (const auto* t = optional_field(j, "rank_tcp_counters")) {
        if (!t->is_array() || t->size() != p.ranks)
            throw spec_error("collective point: 'rank_tcp_counters' must be an array with one entry per rank");
        for (std::size_t r = 0; r < t->size(); ++r) {
            const auto& c = (*t)[r];
            if (c.is_null()) {
                p.rank_tcp_counters.emplace_back();
                continue;
            }
            try {
                p.rank_tcp_counters.emplace_back(tcp_point_counters_from_json(c));
            } catch (const spec_error& e) {
                throw spec_error(fmt::format("collective point: rank_tcp_counters[{}]: {}", r, e.what()));
            }
        }
    }
    check_sane(p);
    return p;
}

json to_json(const collective_result& r) {
    json j;
    write_run_header(j, r, collective_result_schema);
    j["spec"] = to_json(r.spec);
    j["hosts"] = json::array();
    for (const auto& h : r.hosts) j["hosts"].push_back(to_json(h));
    j["points"] = json::array();
    for (const auto& p : r.points) j["points"].push_back(to_json(p));
    j["failed_rank"] = r.failed_rank ? json(*r.failed_rank) : json(nullptr);
    j["failed_at_start"] = r.failed_at_start;
    return j;
}

collective_result collective_result_from_json(const json& j) {
    if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() ||
        j["schema"].get<std::string>() != collective_result_schema)
        throw spec_error(fmt::format("not a meshperf collective result (expected schema \"{}\")", collective_result_schema));
    constexpr std::string_view in = "collective result";
    collective_result r;
    r.id = text(j, "id", in);
    r.state = recorded_state::from_text(text(j, "state", in));
    r.created_at = text(j, "created_at", in);
    if (optional_field(j, "finished_at")) r.finished_at = text(j, "finished_at", in);
    r.spec = collective_spec_from_json(field(j, "spec", in), [](std::string_view h) { return std::string(h); }, no_limits());
    for (const auto& h : j.value("hosts", json::array())) r.hosts.push_back(host_info_from_json(h));
    for (const auto& p : j.value("points", json::array())) r.points.push_back(collective_point_from_json(p));
    if (optional_field(j, "error")) r.error = text(j, "error", in);
    if (optional_field(j, "failed_rank")) {
        if (!j["failed_rank"].is_number_unsigned() || j["failed_rank"].get<std::uint64_t>() >= r.spec.hosts.size())
            throw spec_error("collective result: failed_rank is not one of the ranks");
        r.failed_rank = j["failed_rank"].get<unsigned>();
    }
    if (j.contains("failed_at_start")) {
        if (!j["failed_at_start"].is_boolean()) throw spec_error("collective result: failed_at_start is not true or false");
        r.failed_at_start = j["failed_at_start"].get<bool>();
    }
    r.warnings = j.value("warnings", std::vector<std::string>{});
    return r;
}

std::string collective_csv_header() {
    return "size,count,type,redop,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s,wrong,"
           "run_id,op,algo,ranks,iterations,time_min_us,time_p50_us,time_max_us,algbw_gbit_per_s,busbw_gbit_per_s,"
           "rank_time_min_us,rank_time_max_us,rank_time_max_over_min,slowest_rank,slowest_link,slowest_link_gbit_per_s,"
           "incast_total_gbit_per_s,incast_fairness";
}

std::string to_csv_row(const collective_result& r, const collective_point& p) {
    std::string row = fmt::format("{},{},{},{},{},{},{},{}", p.size_bytes, p.count, to_string(p.element), redop_name(p.op),
                                  us(p.time_s), g(p.algbw_gbyte_per_s), g(p.busbw_gbyte_per_s),
                                  p.wrong ? fmt::format("{}", *p.wrong) : std::string());
    row += fmt::format(",{},{},{},{},{},{},{},{},{},{}", csv_quote(r.id), to_string(p.op), to_string(p.algo), p.ranks,
                       p.iterations, us(p.time_min_s), us(p.time_p50_s), us(p.time_max_s), g(p.algbw_gbit_per_s),
                       g(p.busbw_gbit_per_s));
    row += fmt::format(",{},{},{},{}", us(p.spread.min_s), us(p.spread.max_s), g(p.spread.max_over_min), p.slowest_rank);
    row += p.slowest_link ? fmt::format(",{},{}", to_string(*p.slowest_link), g(p.slowest_link->gbit_per_s)) : std::string(",,");
    row += p.incast ? fmt::format(",{},{}", g(p.incast->total_gbit_per_s), g(p.incast->fairness)) : std::string(",,");
    return row;
}

}  // namespace meshperf::core
