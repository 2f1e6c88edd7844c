#include "transport/tcp/tcp_counters.hpp"

#include <algorithm>
#include <cstddef>
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
    core::tcp_point_counters c;
    c.retransmits = static_cast<std::uint32_t>(after.total_retrans - before.total_retrans);
    c.segments_sent = static_cast<std::uint32_t>(after.segs_out - before.segs_out);
    c.rtt_us = {std::min(before.rtt_us, after.rtt_us), std::max(before.rtt_us, after.rtt_us)};
    c.cwnd = {std::min(before.snd_cwnd, after.snd_cwnd), std::max(before.snd_cwnd, after.snd_cwnd)};
    return c;
}

}  // namespace meshperf::transport::tcp
