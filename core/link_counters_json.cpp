// The JSON form and the sanity check of an end's counter sources (link_counters.hpp), each
// source under its kind's key (counter_sources.hpp).
#include "core/counter_sources.hpp"
#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/link_counters.hpp"
#include "core/netdev_name.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace meshperf::core {

using nlohmann::json;

namespace {

/// Most counters one directory may hold in a peer's report (mlx5's hw_counters: about 60).
constexpr std::size_t max_counters_per_group = 512;

/// A counter name from a peer's report: a file of one sysfs directory (valid_sysfs_file_name).
/// Anything else is refused, so no name can reach outside the directory it is read from.
const std::string& checked_name(const std::string& name, std::string_view field) {
    if (!valid_sysfs_file_name(name))
        throw spec_error(fmt::format("\"{}\" holds a name that cannot be a sysfs file (1 to 64 bytes, no '/' or NUL, not . or ..)",
                                     field));
    return name;
}

json group_json(const counter_group_delta& g) {
    json j = {{"deltas", g.deltas}, {"resets", g.resets}, {"saturated", g.saturated}};
    if (g.intervals.empty()) return j;
    auto& spread = j["intervals"] = json::object();
    for (const auto& [name, s] : g.intervals)
        spread[name] = {{"moved_in", s.intervals}, {"max_increase", s.max_increase}, {"first_at_s", s.first_at_s}};
    return j;
}

counter_interval_spread spread_from_json(const json& j) {
    if (!j.is_object() || !j.contains("moved_in") || !j.contains("max_increase") || !j.contains("first_at_s") ||
        !j.at("first_at_s").is_number())
        throw spec_error("each of \"intervals\" must be an object with \"moved_in\", \"max_increase\" and a number \"first_at_s\"");
    return {json_unsigned(j.at("moved_in"), "moved_in"), json_unsigned(j.at("max_increase"), "max_increase"),
            j.at("first_at_s").get<double>()};
}

std::vector<std::string> name_list(const json& j, std::string_view field) {
    std::vector<std::string> out;
    if (!j.is_array()) throw spec_error(fmt::format("\"{}\" must be a list of counter names", field));
    for (const auto& v : j) {
        if (!v.is_string()) throw spec_error(fmt::format("\"{}\" must be a list of counter names", field));
        out.push_back(checked_name(v.get<std::string>(), field));
    }
    if (out.size() > max_counters_per_group) throw spec_error(fmt::format("\"{}\" names too many counters", field));
    return out;
}

counter_group_delta group_from_json(const json& j, std::string_view field) {
    if (!j.is_object() || !j.contains("deltas") || !j.at("deltas").is_object())
        throw spec_error(fmt::format("\"{}\" must be an object with \"deltas\"", field));
    counter_group_delta g;
    if (j.at("deltas").size() > max_counters_per_group) throw spec_error(fmt::format("\"{}\" holds too many counters", field));
    for (const auto& [name, v] : j.at("deltas").items()) g.deltas[checked_name(name, field)] = json_unsigned(v, "deltas");
    if (const auto r = j.find("resets"); r != j.end()) g.resets = name_list(*r, "resets");
    if (const auto s = j.find("saturated"); s != j.end()) g.saturated = name_list(*s, "saturated");
    if (const auto i = j.find("intervals"); i != j.end()) {
        if (!i->is_object() || i->size() > max_counters_per_group)
            throw spec_error(fmt::format("\"{}.intervals\" must be an object of at most {} counters", field, max_counters_per_group));
        for (const auto& [name, v] : i->items()) g.intervals[checked_name(name, field)] = spread_from_json(v);
    }
    return g;
}

std::string text_field(const json& j, const char* field, std::string_view part) {
    if (!j.contains(field) || !j.at(field).is_string())
        throw spec_error(fmt::format("{} counters without a text \"{}\"", part, field));
    const auto& text = j.at(field).get_ref<const std::string&>();
    if (!valid_netdev_name(text))
        throw spec_error(fmt::format("\"{}\" holds a name Linux does not give an interface or device (1 to 15 bytes, no '/', ':' "
                                     "or white space, not . or ..)",
                                     field));
    return text;
}

void check_group(const counter_group_delta& g, std::string_view where, const link_side_counters& side) {
    for (const auto& r : g.resets)
        if (g.deltas.count(r)) throw insane_figure(fmt::format("{} counter {} both reset and counted", where, r));
    for (const auto& [name, s] : g.intervals) {
        const auto delta = g.delta(name);
        // The intervals split the window, so their rises add up to the delta: a counter rose
        // in no more intervals than its delta, by no more than its delta in one.
        const bool fits = delta && s.intervals >= 1 && s.intervals <= side.intervals && s.intervals <= *delta &&
                          s.max_increase >= 1 && s.max_increase <= *delta && std::isfinite(s.first_at_s) &&
                          s.first_at_s > 0 && s.first_at_s <= side.window_s * (1 + 1e-9);
        if (!fits)
            throw insane_figure(fmt::format("{} counter {}: rose in {} of {} intervals by up to {}, first by {} s, "
                                            "which does not fit its delta {} over {} s",
                                            where, name, s.intervals, side.intervals, s.max_increase, s.first_at_s,
                                            delta ? fmt::to_string(*delta) : std::string("(none)"), side.window_s));
    }
}

std::string part_field(const counter_source_kind& k, std::string_view group) { return fmt::format("{}.{}", k.key, group); }

/// "\"rdma\" must be an object with \"port\", \"counters\" and \"hw_counters\"".
std::string source_shape(const counter_source_kind& k) {
    std::vector<std::string> fields;
    if (k.has_port) fields.push_back("\"port\"");
    for (const auto& g : k.groups) fields.push_back(fmt::format("\"{}\"", g.name));
    std::string list = fields.back();
    if (fields.size() > 1) {
        list.clear();
        for (std::size_t i = 0; i + 1 < fields.size(); ++i) list += (i ? ", " : "") + fields[i];
        list += " and " + fields.back();
    }
    return fmt::format("\"{}\" must be an object with {}", k.key, list);
}

counter_source source_from_json(const counter_source_kind& k, const json& j) {
    bool complete = j.is_object() && (!k.has_port || j.contains("port"));
    for (const auto& g : k.groups) complete = complete && j.contains(g.name);
    if (!complete) throw spec_error(source_shape(k));
    counter_source c;
    c.kind = std::string(k.key);
    c.device = text_field(j, std::string(k.device_field).c_str(), k.part);
    if (k.has_port) c.port = static_cast<unsigned>(json_unsigned(j.at("port"), "port"));
    for (const auto& g : k.groups) c.groups.push_back(group_from_json(j.at(g.name), part_field(k, g.name)));
    return c;
}

}  // namespace

const counter_group_delta& counter_source::group(std::string_view name) const {
    const auto* k = find_counter_source_kind(kind);
    if (k)
        for (std::size_t i = 0; i < k->groups.size() && i < groups.size(); ++i)
            if (k->groups[i].name == name) return groups[i];
    throw std::out_of_range(fmt::format("a {} counter source has no group {}", kind, name));
}

counter_group_delta& counter_source::group(std::string_view name) {
    return const_cast<counter_group_delta&>(std::as_const(*this).group(name));
}

std::string counter_source::where() const {
    const auto* k = find_counter_source_kind(kind);
    return k && k->has_port ? fmt::format("{} port {}", device, port) : device;
}

const counter_source* link_side_counters::source(std::string_view kind) const {
    for (const auto& s : sources)
        if (s.kind == kind) return &s;
    return nullptr;
}

counter_source* link_side_counters::source(std::string_view kind) {
    return const_cast<counter_source*>(std::as_const(*this).source(kind));
}

void check_sane(const link_side_counters& c) {
    if (!(std::isfinite(c.window_s) && c.window_s > 0))
        throw insane_figure(fmt::format("link counters read {} s apart", c.window_s));
    // Intervals are link_counter_interval (250 ms) apart; one a millisecond is already absurd.
    if (static_cast<double>(c.intervals) > c.window_s * 1000 + 2)
        throw insane_figure(fmt::format("link counters read in {} intervals of a {} s window", c.intervals, c.window_s));
    for (const auto& s : c.sources)
        for (const auto& g : s.groups) check_group(g, s.device, c);
}

json to_json(const link_side_counters& c) {
    json j = {{"window_s", c.window_s}};
    if (c.intervals > 0) j["intervals"] = c.intervals;
    for (const auto& s : c.sources) {
        const auto* k = find_counter_source_kind(s.kind);
        if (!k) continue;  // a kind this build does not know is not written
        json part = {{std::string(k->device_field), s.device}};
        if (k->has_port) part["port"] = s.port;
        for (std::size_t i = 0; i < k->groups.size() && i < s.groups.size(); ++i)
            part[std::string(k->groups[i].name)] = group_json(s.groups[i]);
        j[std::string(k->key)] = std::move(part);
    }
    return j;
}

link_side_counters link_side_counters_from_json(const json& j) {
    if (!j.is_object() || !j.contains("window_s") || !j.at("window_s").is_number())
        throw spec_error("link counters must be an object with a number \"window_s\"");
    link_side_counters c;
    c.window_s = j.at("window_s").get<double>();
    if (const auto i = j.find("intervals"); i != j.end()) c.intervals = json_unsigned(*i, "intervals");
    for (const auto& k : counter_source_kinds())
        if (const auto s = j.find(std::string(k.key)); s != j.end() && !s->is_null()) c.sources.push_back(source_from_json(k, *s));
    return c;
}

}  // namespace meshperf::core
