#include "core/link_counters.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/netdev_name.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

std::optional<std::uint64_t> counter_group_delta::delta(std::string_view name) const {
    const auto it = deltas.find(std::string(name));
    if (it == deltas.end()) return std::nullopt;
    return it->second;
}

std::optional<std::uint64_t> ib_counter_maximum(std::string_view name) {
    // Widths of the PortCounters attribute (IBTA spec vol. 1, 16.1.3.5). The data and packet
    // counters are 32 bits there; the kernel shows PortCountersExtended's 64-bit ones when
    // the port has them, so a value of exactly 2^32 − 1 is read as saturated.
    struct width {
        std::string_view name;
        unsigned bits;
    };
    static constexpr width widths[] = {
        {"symbol_error", 16},          {"link_error_recovery", 8},         {"link_downed", 8},
        {"port_rcv_errors", 16},       {"port_rcv_remote_physical_errors", 16}, {"port_rcv_switch_relay_errors", 16},
        {"port_xmit_discards", 16},    {"port_xmit_constraint_errors", 8}, {"port_rcv_constraint_errors", 8},
        {"local_link_integrity_errors", 4}, {"excessive_buffer_overrun_errors", 4}, {"VL15_dropped", 16},
        {"port_xmit_data", 32},        {"port_rcv_data", 32},              {"port_xmit_packets", 32},
        {"port_rcv_packets", 32},      {"port_xmit_wait", 32},
    };
    for (const auto& w : widths)
        if (w.name == name) return (std::uint64_t{1} << w.bits) - 1;
    return std::nullopt;
}

counter_group_delta counter_delta(const counter_values& before, const counter_values& after,
                                  std::optional<std::uint64_t> (*maximum)(std::string_view)) {
    counter_group_delta d;
    for (const auto& [name, end] : after) {
        const auto start = before.find(name);
        if (start == before.end()) continue;
        if (end < start->second) {
            d.resets.push_back(name);
            continue;
        }
        d.deltas[name] = end - start->second;
        if (maximum)
            if (const auto max = maximum(name); max && end >= *max) d.saturated.push_back(name);
    }
    return d;
}

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

}  // namespace

void check_sane(const link_side_counters& c) {
    if (!(std::isfinite(c.window_s) && c.window_s > 0))
        throw insane_figure(fmt::format("link counters read {} s apart", c.window_s));
    // Intervals are link_counter_interval (250 ms) apart; one a millisecond is already absurd.
    if (static_cast<double>(c.intervals) > c.window_s * 1000 + 2)
        throw insane_figure(fmt::format("link counters read in {} intervals of a {} s window", c.intervals, c.window_s));
    if (c.nic) check_group(c.nic->counters, c.nic->interface, c);
    if (c.rdma) {
        check_group(c.rdma->counters, c.rdma->device, c);
        check_group(c.rdma->hw_counters, c.rdma->device, c);
    }
}

json to_json(const link_side_counters& c) {
    json j = {{"window_s", c.window_s}};
    if (c.intervals > 0) j["intervals"] = c.intervals;
    if (c.nic) j["nic"] = {{"interface", c.nic->interface}, {"counters", group_json(c.nic->counters)}};
    if (c.rdma)
        j["rdma"] = {{"device", c.rdma->device},
                     {"port", c.rdma->port},
                     {"counters", group_json(c.rdma->counters)},
                     {"hw_counters", group_json(c.rdma->hw_counters)}};
    return j;
}

link_side_counters link_side_counters_from_json(const json& j) {
    if (!j.is_object() || !j.contains("window_s") || !j.at("window_s").is_number())
        throw spec_error("link counters must be an object with a number \"window_s\"");
    link_side_counters c;
    c.window_s = j.at("window_s").get<double>();
    if (const auto i = j.find("intervals"); i != j.end()) c.intervals = json_unsigned(*i, "intervals");
    if (const auto n = j.find("nic"); n != j.end() && !n->is_null()) {
        if (!n->is_object() || !n->contains("counters")) throw spec_error("\"nic\" must be an object with \"counters\"");
        c.nic = nic_counters{text_field(*n, "interface", "NIC"), group_from_json(n->at("counters"), "nic.counters")};
    }
    if (const auto r = j.find("rdma"); r != j.end() && !r->is_null()) {
        if (!r->is_object() || !r->contains("counters") || !r->contains("hw_counters") || !r->contains("port"))
            throw spec_error("\"rdma\" must be an object with \"port\", \"counters\" and \"hw_counters\"");
        rdma_port_counters p;
        p.device = text_field(*r, "device", "RDMA");
        p.port = static_cast<unsigned>(json_unsigned(r->at("port"), "port"));
        p.counters = group_from_json(r->at("counters"), "rdma.counters");
        p.hw_counters = group_from_json(r->at("hw_counters"), "rdma.hw_counters");
        c.rdma = std::move(p);
    }
    return c;
}

}  // namespace meshperf::core
