#include "client/support/open_files.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sys/resource.h>

namespace meshperf::client {

namespace {

std::uint64_t plain(rlim_t v) { return v == RLIM_INFINITY ? std::uint64_t{1} << 20 : static_cast<std::uint64_t>(v); }

}  // namespace

open_file_limit raise_open_file_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return {};
    open_file_limit out;
    out.known = true;
    if (lim.rlim_cur != RLIM_INFINITY && (lim.rlim_max == RLIM_INFINITY || lim.rlim_cur < lim.rlim_max)) {
        rlimit raised = lim;
        raised.rlim_cur = lim.rlim_max;
        // Linux refuses an infinite soft RLIMIT_NOFILE (above fs.nr_open): then keep the old one.
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            lim = raised;
            out.raised = true;
        }
    }
    out.soft = plain(lim.rlim_cur);
    out.hard = plain(lim.rlim_max);
    return out;
}

std::size_t measurements_within(std::uint64_t soft) {
    if (soft <= files_reserved + files_per_measurement) return 1;
    return static_cast<std::size_t>((soft - files_reserved) / files_per_measurement);
}

std::size_t idle_connections_within(const open_file_limit& limit, std::size_t parallel, std::size_t hosts) {
    const std::uint64_t soft = limit.known ? limit.soft : 1024;
    const std::uint64_t busy = files_reserved + static_cast<std::uint64_t>(parallel) * files_per_measurement;
    if (soft <= busy) return 0;
    return static_cast<std::size_t>(std::min<std::uint64_t>(soft - busy, hosts));
}

parallel_default default_parallel(std::size_t wanted, const open_file_limit& limit) {
    parallel_default d;
    d.wanted = std::max<std::size_t>(wanted, 1);
    // An unknown limit (getrlimit failed): the usual default soft limit of 1024.
    const std::size_t bound = measurements_within(limit.known ? limit.soft : 1024);
    d.parallel = std::min(d.wanted, bound);
    d.limited = d.parallel < d.wanted;
    return d;
}

std::string parallel_limit_note(const parallel_default& d, const open_file_limit& limit, const char* step, const char* unit) {
    const auto waves = (d.wanted + d.parallel - 1) / d.parallel;
    return fmt::format("matrix: the open-file limit (RLIMIT_NOFILE {}{}, hard limit {}) allows {} measurements at once, a {} "
                       "has {} {}: each {} runs in {} waves (raise the hard limit, ulimit -Hn or systemd's LimitNOFILE=, or "
                       "give --parallel, to change it)",
                       limit.known ? std::to_string(limit.soft) : std::string("unknown"), limit.raised ? ", raised" : "",
                       limit.known ? std::to_string(limit.hard) : std::string("unknown"), d.parallel, step, d.wanted, unit,
                       step, waves);
}

}  // namespace meshperf::client
