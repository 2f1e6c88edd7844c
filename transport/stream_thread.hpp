#pragma once
/// What every transport's stream thread does around its loop: pin itself to a CPU and
/// measure its own CPU time. Header-only, so transport/rdma can use it without linking
/// the rest of transport/.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

namespace meshperf::transport {

/// CPU seconds (user + system) the calling thread has used.
inline double thread_cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/// Pins the calling thread to `cpu`; a negative cpu leaves it unpinned. Best effort: a CPU
/// the process may not use leaves the thread where it was.
inline void pin_current_thread(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
}

}  // namespace meshperf::transport
