#include "core/counter_verdicts.hpp"

#include "core/counter_sources.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshperf::core {

namespace {

struct named_meaning {
    std::string_view name;
    counter_meaning meaning;
    std::string_view says;  ///< what an increase means, for the warning
};

// Fatal: NVSentinel's four counter-based fatal conditions (link_downed,
// excessive_buffer_overrun_errors, local_link_integrity_errors, rnr_nak_retry_err) and the
// transport-retry exhaustion counters of mlx5 and rxe, which end the QP the same way.
constexpr std::array known = {
    named_meaning{"link_downed", counter_meaning::fatal, "the port lost its link"},
    named_meaning{"excessive_buffer_overrun_errors", counter_meaning::fatal, "the receive buffer overran: lossless flow control broke"},
    named_meaning{"local_link_integrity_errors", counter_meaning::fatal, "physical errors above the port's limit"},
    named_meaning{"rnr_nak_retry_err", counter_meaning::fatal, "a QP ran out of receiver-not-ready retries"},
    named_meaning{"req_transport_retries_exceeded", counter_meaning::fatal, "a QP ran out of transport retries"},
    named_meaning{"retry_exceeded_err", counter_meaning::fatal, "a QP ran out of transport retries"},
    named_meaning{"retry_rnr_exceeded_err", counter_meaning::fatal, "a QP ran out of receiver-not-ready retries"},
    named_meaning{"symbol_error", counter_meaning::symbol_rate, "bit errors on the wire (cable or transceiver)"},
    named_meaning{"link_error_recovery", counter_meaning::error, "the link retrained"},
    named_meaning{"port_rcv_errors", counter_meaning::error, "malformed packets received"},
    named_meaning{"port_rcv_remote_physical_errors", counter_meaning::error, "packets marked bad upstream"},
    named_meaning{"port_rcv_switch_relay_errors", counter_meaning::error, "packets the port could not relay"},
    named_meaning{"port_xmit_discards", counter_meaning::error, "packets discarded on send (congestion or a down link)"},
    named_meaning{"port_xmit_constraint_errors", counter_meaning::error, "packets not sent for a partition or filter"},
    named_meaning{"port_rcv_constraint_errors", counter_meaning::error, "packets refused for a partition or filter"},
    named_meaning{"VL15_dropped", counter_meaning::error, "management packets dropped"},
    named_meaning{"carrier_changes", counter_meaning::error, "the link went down and up"},
    named_meaning{"rx_errors", counter_meaning::error, "bad frames received"},
    named_meaning{"tx_errors", counter_meaning::error, "frames that failed to send"},
    named_meaning{"rx_dropped", counter_meaning::error, "received frames dropped by the host"},
    named_meaning{"tx_dropped", counter_meaning::error, "frames dropped before sending"},
    named_meaning{"rx_crc_errors", counter_meaning::error, "frames with a bad checksum (cable or transceiver)"},
    named_meaning{"rx_missed_errors", counter_meaning::error, "frames the NIC had no buffer for"},
    named_meaning{"rx_fifo_errors", counter_meaning::error, "receive FIFO overruns"},
    named_meaning{"rx_frame_errors", counter_meaning::error, "misaligned frames"},
    named_meaning{"rx_length_errors", counter_meaning::error, "frames of a wrong length"},
    named_meaning{"rx_over_errors", counter_meaning::error, "receive ring overruns"},
    named_meaning{"tx_fifo_errors", counter_meaning::error, "transmit FIFO errors"},
    named_meaning{"tx_aborted_errors", counter_meaning::error, "aborted transmissions"},
    named_meaning{"tx_carrier_errors", counter_meaning::error, "sends without carrier"},
    named_meaning{"out_of_sequence", counter_meaning::error, "packets out of sequence (loss on the path)"},
    named_meaning{"packet_seq_err", counter_meaning::error, "NAKs for packet sequence errors (loss on the path)"},
    named_meaning{"implied_nak_seq_err", counter_meaning::error, "implied NAKs (loss on the path)"},
    named_meaning{"local_ack_timeout_err", counter_meaning::error, "ACK timeouts: the sender retransmitted"},
    named_meaning{"duplicate_request", counter_meaning::error, "duplicate requests: the sender retransmitted"},
    named_meaning{"out_of_seq_request", counter_meaning::error, "requests out of sequence (loss on the path)"},
    named_meaning{"rcvd_seq_err", counter_meaning::error, "NAKs for sequence errors (loss on the path)"},
    named_meaning{"completer_retry_err", counter_meaning::error, "the completer timed out and retried"},
    named_meaning{"rcvd_rnr_err", counter_meaning::error, "receiver-not-ready NAKs received"},
    named_meaning{"send_rnr_err", counter_meaning::error, "receiver-not-ready NAKs sent"},
    named_meaning{"send_err", counter_meaning::error, "packets that failed to send"},
    named_meaning{"req_cqe_error", counter_meaning::error, "requester completions in error"},
    named_meaning{"resp_cqe_error", counter_meaning::error, "responder completions in error"},
    // AWS EFA devices' hw_counters (class/infiniband/<efa>/ports/1/hw_counters): SRD
    // retransmits and remotes that stopped answering, warnings as TCP retransmits are.
    named_meaning{"retrans_pkts", counter_meaning::error, "packets the EFA device retransmitted (loss on the path)"},
    named_meaning{"retrans_timeout_events", counter_meaning::error, "EFA retransmit timeouts"},
    named_meaning{"impaired_remote_conn_events", counter_meaning::error, "EFA connections to a remote that became impaired"},
    named_meaning{"unresponsive_remote_events", counter_meaning::error, "EFA remotes that stopped responding"},
    named_meaning{"rx_drops", counter_meaning::error, "packets the EFA device dropped on receive"},
    named_meaning{"np_ecn_marked_roce_packets", counter_meaning::congestion, "ECN-marked packets received"},
    named_meaning{"np_cnp_sent", counter_meaning::congestion, "congestion notifications sent"},
    named_meaning{"rp_cnp_handled", counter_meaning::congestion, "congestion notifications acted on"},
    named_meaning{"rp_cnp_ignored", counter_meaning::congestion, "congestion notifications ignored"},
    named_meaning{"port_xmit_wait", counter_meaning::congestion, "ticks the port had data but no credits"},
    named_meaning{"roce_slow_restart", counter_meaning::congestion, "RoCE slow restarts"},
};

const named_meaning* find_known(std::string_view counter) {
    for (const auto& k : known)
        if (k.name == counter) return &k;
    return nullptr;
}

/// " in 2 of 12 intervals, first by 1.25 s" when the window was read in intervals and the
/// counter rose in some; else nothing.
std::string interval_text(const counter_group_delta& g, const std::string& name, std::uint64_t intervals) {
    const auto it = g.intervals.find(name);
    if (it == g.intervals.end() || intervals < 2) return {};
    return fmt::format(" in {} of {} intervals, first by {:.2f} s", it->second.intervals, intervals, it->second.first_at_s);
}

/// The findings of one group of counters of one end.
void judge_group(const counter_group_delta& g, std::string_view side, const std::string& where, const link_side_counters& s,
                 const counter_thresholds& t, std::vector<counter_finding>& out) {
    const double window_s = s.window_s;
    for (const auto& [name, delta] : g.deltas) {
        if (delta == 0) continue;
        const auto* k = find_known(name);
        if (!k || k->meaning == counter_meaning::traffic || k->meaning == counter_meaning::congestion) continue;
        const bool at_least = std::find(g.saturated.begin(), g.saturated.end(), name) != g.saturated.end();
        counter_finding f{std::string(side), where, name, delta, check_state::warning, ""};
        const auto count = fmt::format("{}{} {}", at_least ? "at least " : "", delta, name);
        const auto spread = interval_text(g, name, s.intervals);
        if (k->meaning == counter_meaning::symbol_rate) {
            const double per_hour = static_cast<double>(delta) * 3600.0 / window_s;
            if (!(per_hour > t.symbol_errors_per_hour)) continue;
            f.reason = fmt::format("{} in {:.1f} s{} ({:.0f}/hour, above {:g}/hour: {})", count, window_s, spread, per_hour,
                                   t.symbol_errors_per_hour, k->says);
        } else {
            if (k->meaning == counter_meaning::fatal) f.state = check_state::critical;
            f.reason = fmt::format("{}{} ({})", count, spread, k->says);
        }
        out.push_back(std::move(f));
    }
}

void judge_side(const link_side_counters& s, std::string_view side, const counter_thresholds& t,
                std::vector<counter_finding>& out) {
    for (const auto& source : s.sources) {
        const auto where = source.where();
        for (const auto& g : source.groups) judge_group(g, side, where, s, t, out);
    }
}

/// Bytes the end sent in the window, as its leading source (counter_sources.hpp: the RDMA
/// port before the NIC) counts them; empty when it does not say.
std::optional<std::uint64_t> bytes_sent(const link_side_counters& s) {
    const auto* lead = leading_source(s);
    if (!lead) return std::nullopt;
    const auto* k = find_counter_source_kind(lead->kind);
    return k && k->bytes_sent ? k->bytes_sent(*lead) : std::nullopt;
}

std::string side_name(const link_side_counters& s) {
    const auto* lead = leading_source(s);
    return lead ? lead->where() : std::string("?");
}

void reset_warning(const link_side_counters& s, std::string_view side, std::vector<std::string>& out) {
    std::vector<std::string> names;
    for (const auto& source : s.sources)
        for (const auto& g : source.groups) names.insert(names.end(), g.resets.begin(), g.resets.end());
    if (names.empty()) return;
    out.push_back(fmt::format("{} {}: {} went backwards during the point (reset or wrapped: a driver reload or a "
                              "counter reset), so {} not counted",
                              side, side_name(s), fmt::join(names, ", "), names.size() == 1 ? "it is" : "they are"));
}

void cross_check(const std::optional<link_side_counters>& s, std::string_view side, std::uint64_t sent,
                 std::vector<std::string>& out) {
    if (!s || sent == 0) return;
    const auto counted = bytes_sent(*s);
    if (!counted || *counted * 2 >= sent) return;
    out.push_back(fmt::format("{} {}: its counters show {} bytes sent while the point moved {} from this end: the "
                              "traffic went over another interface or port (check the routes and --rdma-device)",
                              side, side_name(*s), *counted, sent));
}

}  // namespace

std::string_view to_string(counter_meaning m) {
    switch (m) {
        case counter_meaning::traffic: return "traffic";
        case counter_meaning::congestion: return "congestion";
        case counter_meaning::error: return "error";
        case counter_meaning::symbol_rate: return "symbol_rate";
        case counter_meaning::fatal: return "fatal";
    }
    return "traffic";
}

counter_meaning meaning_of(std::string_view counter) {
    const auto* k = find_known(counter);
    return k ? k->meaning : counter_meaning::traffic;
}

void validate(const counter_thresholds& t) {
    if (!(std::isfinite(t.symbol_errors_per_hour) && t.symbol_errors_per_hour > 0))
        throw spec_error("--max-symbol-errors-per-hour must be a positive number (the IBTA bound is 120)");
    if (!(t.retransmit_warn_share > 0 && t.retransmit_warn_share <= t.retransmit_crit_share && t.retransmit_crit_share <= 1))
        throw spec_error(fmt::format("--retransmit-warn {} and --retransmit-crit {} must be shares with 0 < warn <= crit "
                                     "<= 1 (e.g. 0.01 and 0.05: 1% and 5% of the segments sent)",
                                     t.retransmit_warn_share, t.retransmit_crit_share));
}

std::vector<counter_finding> judge_link_counters(const link_counters& c, const counter_thresholds& t) {
    std::vector<counter_finding> out;
    if (c.initiator) judge_side(*c.initiator, "initiator", t, out);
    if (c.peer) judge_side(*c.peer, "peer", t, out);
    std::stable_sort(out.begin(), out.end(), [](const counter_finding& a, const counter_finding& b) {
        return static_cast<int>(a.state) > static_cast<int>(b.state);
    });
    return out;
}

std::optional<counter_finding> judge_tcp_counters(const tcp_point_counters& c, const counter_thresholds& t) {
    const double share = c.retransmit_share();
    if (!(share > t.retransmit_warn_share)) return std::nullopt;
    const bool crit = share > t.retransmit_crit_share;
    return counter_finding{"sender", "TCP", "retransmit_share", c.retransmits,
                           crit ? check_state::critical : check_state::warning,
                           fmt::format("{} of {} segments retransmitted ({:.2f}%, above {:g}%)", c.retransmits,
                                       c.segments_sent, share * 100,
                                       (crit ? t.retransmit_crit_share : t.retransmit_warn_share) * 100)};
}

std::vector<std::string> link_counter_warnings(const link_counters& c, std::string_view point,
                                               std::uint64_t initiator_sent_bytes, std::uint64_t peer_sent_bytes) {
    std::vector<std::string> out;
    const auto findings = judge_link_counters(c);
    // One warning per end and interface or port, in the order judge_link_counters gave.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& f : findings) {
        const auto key = fmt::format("{} {}", f.side, f.where);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
        if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
        it->second.push_back(f.reason);
    }
    for (const auto& [key, reasons] : groups)
        out.push_back(fmt::format("{}: {} during the {} point", key, fmt::join(reasons, ", "), point));
    if (c.initiator) reset_warning(*c.initiator, "initiator", out);
    if (c.peer) reset_warning(*c.peer, "peer", out);
    cross_check(c.initiator, "initiator", initiator_sent_bytes, out);
    cross_check(c.peer, "peer", peer_sent_bytes, out);
    return out;
}

}  // namespace meshperf::core
