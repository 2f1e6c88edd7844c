// client::for_each_bounded: every job runs once, never more than the bound at a time.
#include "client/support/bounded_parallel.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace bounded_parallel_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::client::for_each_bounded;

TEST_CASE("for_each_bounded: each index once, at most the bound at a time") {
    for (std::size_t bound : {1u, 3u, 8u, 100u}) {
        CAPTURE(bound);
        std::vector<int> runs(40, 0);
        std::mutex m;
        std::size_t running = 0, peak = 0;
        for_each_bounded(runs.size(), bound, [&](std::size_t i) {
            {
                std::lock_guard lock(m);
                ++runs[i];
                peak = std::max(peak, ++running);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            std::lock_guard lock(m);
            --running;
        });
        for (int r : runs) CHECK(r == 1);
        CHECK(peak <= bound);
        if (bound > 1) CHECK(peak > 1);  // it does run jobs side by side
    }
}

TEST_CASE("for_each_bounded: no jobs, and a zero bound is refused") {
    int calls = 0;
    for_each_bounded(0, 4, [&](std::size_t) { ++calls; });
    CHECK(calls == 0);
    CHECK_THROWS_AS(for_each_bounded(3, 0, [&](std::size_t) { ++calls; }), std::invalid_argument);
    CHECK(calls == 0);
}

}  // namespace bounded_parallel_test
