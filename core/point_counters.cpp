#include "core/point_counters.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

namespace {

gauge_range range_union(const gauge_range& a, const gauge_range& b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

std::optional<std::uint64_t> larger(const std::optional<std::uint64_t>& a, const std::optional<std::uint64_t>& b) {
    if (a && b) return std::max(*a, *b);
    return a ? a : b;
}

std::optional<std::uint64_t> optional_unsigned(const json& j, const char* field) {
    const auto it = j.find(field);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return json_unsigned(*it, field);
}

gauge_range range_from_json(const json& j, std::string_view field) {
    if (!j.is_object() || !j.contains("min") || !j.contains("max"))
        throw spec_error(fmt::format("\"{}\" must be an object with \"min\" and \"max\"", field));
    return {json_unsigned(j.at("min"), field), json_unsigned(j.at("max"), field)};
}

}  // namespace

tcp_point_counters combined(const tcp_point_counters& a, const tcp_point_counters& b) {
    tcp_point_counters c;
    c.retransmits = a.retransmits + b.retransmits;
    c.segments_sent = a.segments_sent + b.segments_sent;
    c.rtt_us = range_union(a.rtt_us, b.rtt_us);
    c.cwnd = range_union(a.cwnd, b.cwnd);
    c.interval_readings = a.interval_readings + b.interval_readings;
    c.rtt_median_us = larger(a.rtt_median_us, b.rtt_median_us);
    c.rttvar_max_us = larger(a.rttvar_max_us, b.rttvar_max_us);
    if (a.delivery_rate && b.delivery_rate) c.delivery_rate = range_union(*a.delivery_rate, *b.delivery_rate);
    else c.delivery_rate = a.delivery_rate ? a.delivery_rate : b.delivery_rate;
    c.lost_max = larger(a.lost_max, b.lost_max);
    c.reordering_max = larger(a.reordering_max, b.reordering_max);
    return c;
}

std::optional<std::string> retransmit_warning(const tcp_point_counters& c) {
    if (!(c.retransmit_share() > retransmit_warning_share)) return std::nullopt;
    return fmt::format("TCP retransmits: {} of the {} segments sent in the measured window and its close were retransmissions ({:.2f}%, "
                       "above {:g}%): the path dropped packets (a shallow queue, loss or congestion), so the figure is "
                       "what TCP recovered to, not what the link carries",
                       c.retransmits, c.segments_sent, c.retransmit_share() * 100, retransmit_warning_share * 100);
}

void check_sane(const tcp_point_counters& c, bool bytes_moved) {
    if (c.retransmits > c.segments_sent)
        throw insane_figure(fmt::format("TCP counters: {} retransmitted segments but only {} sent", c.retransmits, c.segments_sent));
    if (bytes_moved && c.segments_sent == 0) throw insane_figure("TCP counters: bytes moved but no segment was sent");
    if (c.rtt_us.min > c.rtt_us.max) throw insane_figure("TCP counters: smallest RTT above the largest");
    if (c.cwnd.min > c.cwnd.max) throw insane_figure("TCP counters: smallest cwnd above the largest");
    if (c.rtt_median_us && (*c.rtt_median_us < c.rtt_us.min || *c.rtt_median_us > c.rtt_us.max))
        throw insane_figure("TCP counters: the median RTT lies outside the RTT range");
    if (c.delivery_rate && c.delivery_rate->min > c.delivery_rate->max)
        throw insane_figure("TCP counters: smallest delivery rate above the largest");
}

json to_json(const tcp_point_counters& c) {
    json j = {{"retransmits", c.retransmits},
              {"segments_sent", c.segments_sent},
              {"retransmit_share", c.retransmit_share()},
              {"rtt_us", {{"min", c.rtt_us.min}, {"max", c.rtt_us.max}}},
              {"cwnd", {{"min", c.cwnd.min}, {"max", c.cwnd.max}}},
              {"interval_readings", c.interval_readings}};
    if (c.rtt_median_us) j["rtt_us"]["median"] = *c.rtt_median_us;
    if (c.rttvar_max_us) j["rttvar_us_max"] = *c.rttvar_max_us;
    if (c.delivery_rate) j["delivery_rate_bytes_per_s"] = {{"min", c.delivery_rate->min}, {"max", c.delivery_rate->max}};
    if (c.lost_max) j["lost_max"] = *c.lost_max;
    if (c.reordering_max) j["reordering_max"] = *c.reordering_max;
    return j;
}

tcp_point_counters tcp_point_counters_from_json(const json& j) {
    if (!j.is_object()) throw spec_error("TCP counters must be an object");
    for (const char* field : {"retransmits", "segments_sent", "rtt_us", "cwnd"})
        if (!j.contains(field)) throw spec_error(fmt::format("TCP counters without \"{}\"", field));
    tcp_point_counters c;
    c.retransmits = json_unsigned(j.at("retransmits"), "retransmits");
    c.segments_sent = json_unsigned(j.at("segments_sent"), "segments_sent");
    c.rtt_us = range_from_json(j.at("rtt_us"), "rtt_us");
    c.cwnd = range_from_json(j.at("cwnd"), "cwnd");
    if (const auto n = optional_unsigned(j, "interval_readings")) c.interval_readings = *n;
    if (j.at("rtt_us").is_object()) c.rtt_median_us = optional_unsigned(j.at("rtt_us"), "median");
    c.rttvar_max_us = optional_unsigned(j, "rttvar_us_max");
    if (const auto d = j.find("delivery_rate_bytes_per_s"); d != j.end() && !d->is_null())
        c.delivery_rate = range_from_json(*d, "delivery_rate_bytes_per_s");
    c.lost_max = optional_unsigned(j, "lost_max");
    c.reordering_max = optional_unsigned(j, "reordering_max");
    return c;
}

}  // namespace meshperf::core
