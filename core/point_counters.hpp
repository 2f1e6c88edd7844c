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

    // From every reading, the ones inside the window too (each 25 ms tick, by the controlling
    // thread); absent in results of older daemons.
    std::uint64_t interval_readings = 0;            ///< readings inside the window, all streams
    std::optional<std::uint64_t> rtt_median_us;     ///< median tcpi_rtt over the readings
    std::optional<std::uint64_t> rttvar_max_us;     ///< largest tcpi_rttvar (the RTT's mean deviation)
    std::optional<gauge_range> delivery_rate;       ///< tcpi_delivery_rate, bytes/s, over the readings that have one
    std::optional<std::uint64_t> lost_max;          ///< most segments presumed lost at one reading (tcpi_lost)
    std::optional<std::uint64_t> reordering_max;    ///< largest reordering degree seen (tcpi_reordering)

    /// retransmits / segments_sent (0 when nothing was sent).
    double retransmit_share() const {
        return segments_sent ? static_cast<double>(retransmits) / static_cast<double>(segments_sent) : 0.0;
    }
};

/// The counters of two groups of streams as one: counts add, ranges widen, maxima are the
/// larger; the median is the larger of the two (each side's median is over its own
/// readings, and the slower side's is the one that explains a slow point).
tcp_point_counters combined(const tcp_point_counters&, const tcp_point_counters&);

/// A retransmit share above this gets a warning on its point.
inline constexpr double retransmit_warning_share = 0.01;

/// The point's warning when its retransmit share exceeds retransmit_warning_share; empty otherwise.
std::optional<std::string> retransmit_warning(const tcp_point_counters&);

/// Throws insane_figure unless retransmits <= segments_sent, each range has min <= max and
/// the median RTT lies within the RTT range;
/// `bytes_moved`: the point's receivers counted bytes, so some segment was sent.
void check_sane(const tcp_point_counters&, bool bytes_moved);

/// {"retransmits", "segments_sent", "retransmit_share", "rtt_us": {"min", "max", "median"},
///  "cwnd": {"min", "max"}, "interval_readings", "rttvar_us_max",
///  "delivery_rate_bytes_per_s": {"min", "max"}, "lost_max", "reordering_max"}; the optional
/// parts are left out when absent.
nlohmann::json to_json(const tcp_point_counters&);
/// Reads what to_json wrote (retransmit_share is derived, not read; the optional parts may be
/// missing, as older daemons write them); throws spec_error
/// naming the field when one is missing or of the wrong type.
tcp_point_counters tcp_point_counters_from_json(const nlohmann::json&);

}  // namespace meshperf::core
