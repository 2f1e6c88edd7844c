#pragma once
/// Runs independent jobs on a bounded number of threads: how `meshperf matrix` keeps a
/// 2,000-node round (1,000 pairs) from opening 1,000 threads and connections at once.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace meshperf::client {

/// Calls job(i) once for every i in [0, count), on at most max_parallel threads at a time
/// (each thread takes the next index when it finishes one), and returns when all are done.
/// job must not throw. Throws std::invalid_argument when max_parallel is 0.
inline void for_each_bounded(std::size_t count, std::size_t max_parallel, const std::function<void(std::size_t)>& job) {
    if (max_parallel == 0) throw std::invalid_argument("for_each_bounded: max_parallel must be at least 1");
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> workers;
    const std::size_t n = std::min(count, max_parallel);
    workers.reserve(n);
    for (std::size_t w = 0; w < n; ++w)
        workers.emplace_back([&] {
            for (std::size_t i = next++; i < count; i = next++) job(i);
        });
    for (auto& t : workers) t.join();
}

}  // namespace meshperf::client
