#pragma once
/// Counters of the path read around a measured point, recorded with its figures: so far the
/// TCP counters of the point's sending streams (docs/counters.md). Pure: the transport reads
/// the sockets and hands the deltas in.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace meshperf::core {

/// The smallest and largest reading of a gauge over the point.
struct gauge_range {
    std::uint64_t min = 0;
    std::uint64_t max = 0;
};

/// What the sending TCP streams of one point did in its measured window (TCP_INFO read
/// just before the window opened and just after it closed), summed over the streams of
/// both daemons that sent. Counts are deltas; rtt and cwnd are ranges over the readings.
struct tcp_point_counters {
    std::uint64_t retransmits = 0;    ///< segments retransmitted (tcpi_total_retrans)
    std::uint64_t segments_sent = 0;  ///< segments sent, retransmissions included (tcpi_segs_out)
    gauge_range rtt_us;               ///< smoothed round-trip time, µs (tcpi_rtt)
    gauge_range cwnd;                 ///< congestion window, segments (tcpi_snd_cwnd)

    /// retransmits / segments_sent (0 when nothing was sent).
    double retransmit_share() const {
        return segments_sent ? static_cast<double>(retransmits) / static_cast<double>(segments_sent) : 0.0;
    }
};

/// The counters of two groups of streams as one: counts add, ranges widen.
tcp_point_counters combined(const tcp_point_counters&, const tcp_point_counters&);

/// A retransmit share above this gets a warning on its point.
inline constexpr double retransmit_warning_share = 0.01;

/// The point's warning when its retransmit share exceeds retransmit_warning_share; empty otherwise.
std::optional<std::string> retransmit_warning(const tcp_point_counters&);

/// Throws insane_figure unless retransmits <= segments_sent and each range has min <= max;
/// `bytes_moved`: the point's receivers counted bytes, so some segment was sent.
void check_sane(const tcp_point_counters&, bool bytes_moved);

/// {"retransmits", "segments_sent", "retransmit_share", "rtt_us": {"min", "max"}, "cwnd": {"min", "max"}}
nlohmann::json to_json(const tcp_point_counters&);
/// Reads what to_json wrote (retransmit_share is derived, not read); throws spec_error
/// naming the field when one is missing or of the wrong type.
tcp_point_counters tcp_point_counters_from_json(const nlohmann::json&);

}  // namespace meshperf::core
