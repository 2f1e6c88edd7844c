#pragma once
/// What the counters recorded around a point say about the link: which increases are
/// evidence only (traffic, congestion marks), which should never happen on a healthy link
/// (WARNING), and which mean the link went down or broke its lossless contract (CRITICAL).
/// Thresholds and their sources: docs/counters.md. Pure.
#include "core/check.hpp"
#include "core/link_counters.hpp"
#include "core/point_counters.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// What an increase of a counter means.
enum class counter_meaning {
    traffic,      ///< bytes and packets: evidence, and the cross-check with the point's bytes
    congestion,   ///< ECN marks, CNPs, transmit waits: evidence of congestion control at work
    error,        ///< stays at 0 on a healthy link: any increase is a WARNING
    symbol_rate,  ///< symbol_error: a WARNING above symbol_errors_per_hour
    fatal,        ///< the link went down, or a lossless or retry contract broke: CRITICAL
};

/// "traffic", "congestion", "error", "symbol_rate", "fatal": the label /metrics gives it.
std::string_view to_string(counter_meaning);

/// The meaning of a counter by its sysfs name (the same names mean the same in a NIC's
/// statistics, an RDMA port's counters and its hw_counters; unknown names are traffic).
counter_meaning meaning_of(std::string_view counter);

/// Thresholds on counters, for point warnings and for `check`. validate() checks them.
struct counter_thresholds {
    /// symbol_error above this rate over the window is a WARNING: the IBTA's bit error
    /// rate bound of 10^-12, as 120 symbol errors an hour (NVSentinel uses it too).
    double symbol_errors_per_hour = 120;
    double retransmit_warn_share = 0.01;  ///< TCP retransmit share above: WARNING (rule of thumb)
    double retransmit_crit_share = 0.05;  ///< above: CRITICAL
};

/// Throws spec_error naming the option unless 0 < warn <= crit <= 1 and the symbol rate is
/// positive and finite.
void validate(const counter_thresholds&);

/// One counter whose increase is not OK.
struct counter_finding {
    std::string side;     ///< "initiator" or "peer"
    std::string where;    ///< "veth0", "mlx5_0 port 1", "TCP" (the point's sending streams)
    std::string counter;  ///< sysfs name, or "retransmit_share"
    std::uint64_t delta = 0;
    check_state state = check_state::warning;  ///< warning or critical
    std::string reason;   ///< one phrase: "2 link_downed (the port lost its link)"
};

/// The counters of one point that are not OK, worst first (both ends, NIC and RDMA port).
/// Counters that were reset count as nothing; saturated ones as at least their delta.
std::vector<counter_finding> judge_link_counters(const link_counters&, const counter_thresholds& = {});

/// The TCP retransmit share against the thresholds; empty when it is OK.
std::optional<counter_finding> judge_tcp_counters(const tcp_point_counters&, const counter_thresholds& = {});

/// The point's warnings from its link counters: one per end whose counters moved that
/// should not have ("peer veth1: 2 carrier_changes, 37 rx_dropped during the 1 MiB point"),
/// one per end with counters that went backwards, and one when the sending end's NIC
/// carried fewer bytes than the point moved (`sent_bytes` by the initiator and by the
/// peer; the traffic went over another interface). `point` names the point.
std::vector<std::string> link_counter_warnings(const link_counters&, std::string_view point,
                                               std::uint64_t initiator_sent_bytes, std::uint64_t peer_sent_bytes);

}  // namespace meshperf::core
