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
    return c;
}

std::optional<std::string> retransmit_warning(const tcp_point_counters& c) {
    if (!(c.retransmit_share() > retransmit_warning_share)) return std::nullopt;
    return fmt::format("TCP retransmits: {} of the {} segments sent in the measured window were retransmissions ({:.2f}%, "
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
}

json to_json(const tcp_point_counters& c) {
    return {{"retransmits", c.retransmits},
            {"segments_sent", c.segments_sent},
            {"retransmit_share", c.retransmit_share()},
            {"rtt_us", {{"min", c.rtt_us.min}, {"max", c.rtt_us.max}}},
            {"cwnd", {{"min", c.cwnd.min}, {"max", c.cwnd.max}}}};
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
    return c;
}

}  // namespace meshperf::core
