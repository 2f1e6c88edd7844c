#include "transport/tcp/tcp_counters.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <netinet/in.h>
#include <linux/tcp.h>  // glibc's <netinet/tcp.h> tcp_info ends before tcpi_segs_out
#include <sys/socket.h>

namespace meshperf::transport::tcp {

std::optional<tcp_snapshot> read_tcp_snapshot(int fd) {
    if (fd < 0) return std::nullopt;
    ::tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    if (len < offsetof(::tcp_info, tcpi_segs_out) + sizeof info.tcpi_segs_out) return std::nullopt;
    tcp_snapshot s;
    s.total_retrans = info.tcpi_total_retrans;
    s.segs_out = info.tcpi_segs_out;
    s.rtt_us = info.tcpi_rtt;
    s.rttvar_us = info.tcpi_rttvar;
    s.snd_cwnd = info.tcpi_snd_cwnd;
    // Fields of newer kernels than the one that added segs_out read 0 where the kernel is older.
    if (len >= offsetof(::tcp_info, tcpi_delivery_rate) + sizeof info.tcpi_delivery_rate)
        s.delivery_rate = info.tcpi_delivery_rate;
    s.lost = info.tcpi_lost;
    s.reordering = info.tcpi_reordering;
    return s;
}

core::tcp_point_counters tcp_counters_between(const tcp_snapshot& before, const tcp_snapshot& after) {
    const stream_tcp_readings one{before, {}, after};
    return tcp_counters_of(std::span(&one, 1));
}

core::tcp_point_counters tcp_counters_of(std::span<const stream_tcp_readings> streams) {
    core::tcp_point_counters c;
    if (streams.empty()) return c;
    std::vector<std::uint64_t> rtts;
    std::uint64_t rttvar = 0, lost = 0, reordering = 0;
    std::optional<core::gauge_range> rate;
    c.rtt_us = {UINT64_MAX, 0};
    c.cwnd = {UINT64_MAX, 0};
    auto take = [&](const tcp_snapshot& r, bool has_rate) {
        rtts.push_back(r.rtt_us);
        c.rtt_us = {std::min<std::uint64_t>(c.rtt_us.min, r.rtt_us), std::max<std::uint64_t>(c.rtt_us.max, r.rtt_us)};
        c.cwnd = {std::min<std::uint64_t>(c.cwnd.min, r.snd_cwnd), std::max<std::uint64_t>(c.cwnd.max, r.snd_cwnd)};
        rttvar = std::max<std::uint64_t>(rttvar, r.rttvar_us);
        lost = std::max<std::uint64_t>(lost, r.lost);
        reordering = std::max<std::uint64_t>(reordering, r.reordering);
        // The kernel's estimate before the window is the warm-up's; 0 means none yet.
        if (has_rate && r.delivery_rate > 0)
            rate = rate ? core::gauge_range{std::min(rate->min, r.delivery_rate), std::max(rate->max, r.delivery_rate)}
                        : core::gauge_range{r.delivery_rate, r.delivery_rate};
    };
    for (const auto& s : streams) {
        c.retransmits += static_cast<std::uint32_t>(s.after.total_retrans - s.before.total_retrans);
        c.segments_sent += static_cast<std::uint32_t>(s.after.segs_out - s.before.segs_out);
        c.interval_readings += s.inside.size();
        take(s.before, false);
        for (const auto& r : s.inside) take(r, true);
        take(s.after, true);
    }
    std::nth_element(rtts.begin(), rtts.begin() + static_cast<std::ptrdiff_t>(rtts.size() / 2), rtts.end());
    c.rtt_median_us = rtts[rtts.size() / 2];  // the upper median of an even count
    c.rttvar_max_us = rttvar;
    c.delivery_rate = rate;
    c.lost_max = lost;
    c.reordering_max = reordering;
    return c;
}

}  // namespace meshperf::transport::tcp
