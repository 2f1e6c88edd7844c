#pragma once
/// What every transport's stream thread does around its loop: pin itself to a CPU, note
/// where it ran, and measure its own CPU time. Header-only, so transport/rdma can use it
/// without linking the rest of transport/.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cstddef>
#include <vector>

namespace meshperf::transport {

/// CPU seconds (user + system) the calling thread has used.
inline double thread_cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/// Pins the calling thread to `cpu`. Returns false when cpu is negative (leave it to the
/// scheduler) or the kernel refused (a CPU the process may not use); the thread then stays
/// where it was.
inline bool pin_current_thread(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

/// Where one measuring thread ran: the CPU it was pinned to (if it was) and the CPUs
/// sched_getcpu saw when its loop started and when it ended (-1: not known).
struct thread_cpu_record {
    bool pinned = false;
    int cpu_at_start = -1;
    int cpu_at_end = -1;
};

/// The CPU the calling thread runs on now, or -1.
inline int current_cpu() { return ::sched_getcpu(); }

/// Which CPU stream `index` of a side goes to: round-robin over `cpus`; -1 when empty.
inline int cpu_for_stream(const std::vector<int>& cpus, std::size_t index) {
    return cpus.empty() ? -1 : cpus[index % cpus.size()];
}

}  // namespace meshperf::transport
