// daemon/collective/engine: every op run by the real engine, one thread per rank, over
// a mesh of socket pairs (the TCP data path), with host memory and with device memory
// emulated in host memory (daemon/test_hooks/emulated_gpu.hpp: buffers apart from the engine's,
// copies and the sum done as a device would), verified with zero wrong elements; a corrupting rank is
// counted wrong on both. The CUDA implementation of the device memory is checked on a GPU by
// tests/gpu (gpu_device_test).
#include "core/collective/plan.hpp"
#include "core/collective/spec.hpp"
#include "core/collective/reduce_ops.hpp"
#include "daemon/test_hooks/emulated_gpu.hpp"
#include "daemon/collective/engine.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <exception>
#include <mutex>
#include <sys/socket.h>
#include <thread>

namespace collective_engine_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using transport::mesh::device_memory;

namespace {

struct outcome {
    std::uint64_t wrong = 0;
    std::uint64_t iterations = 0;
};

/// Runs one size of `op` over p ranks in threads; returns the wrong elements over all ranks.
outcome run_ranks(core::collective_op op, core::collective_algo algo, unsigned p, std::uint64_t size, bool device,
                  daemon::emulated_gpu_counters& sums, int corrupt_rank = -1) {
    std::vector<daemon::collective_mesh> meshes(p);
    for (auto& m : meshes) m.fds.resize(p);
    for (unsigned a = 0; a < p; ++a)
        for (unsigned b = a + 1; b < p; ++b) {
            int sv[2];
            REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
            meshes[a].fds[b].reset(sv[0]);
            meshes[b].fds[a].reset(sv[1]);
        }
    std::vector<daemon::rank_timing> timings(p);
    std::vector<std::exception_ptr> errors(p);
    const std::atomic<bool> never{false};
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < p; ++r)
        threads.emplace_back([&, r] {
            try {
                daemon::size_run_options o;
                o.warmup_iterations = 1;
                o.iterations = 2;
                o.verify = true;
                o.corrupt = static_cast<int>(r) == corrupt_rank;
                if (device)
                    o.device_memory = [&sums](std::size_t s, std::size_t v, std::size_t c) {
                        return daemon::make_emulated_collective_memory(s, v, c, &sums);
                    };
                const auto plan = core::plan_collective(op, algo, p, r, core::dtype::fp32, size);
                timings[r] = daemon::measure_collective_size(plan, meshes[r], o, never);
            } catch (...) {
                errors[r] = std::current_exception();
                meshes[r].close();  // the others see it close, as in a run
            }
        });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    outcome out;
    for (const auto& t : timings) {
        REQUIRE(t.wrong.has_value());
        out.wrong += *t.wrong;
        CHECK(t.iteration_s.size() == 2);
        for (double s : t.iteration_s) CHECK(s > 0);
        out.iterations = t.iteration_s.size();
    }
    return out;
}

struct op_algo {
    core::collective_op op;
    core::collective_algo algo;
};
const op_algo every_case[] = {
    {core::collective_op::allreduce, core::collective_algo::ring},      {core::collective_op::allreduce, core::collective_algo::tree},
    {core::collective_op::reduce_scatter, core::collective_algo::ring}, {core::collective_op::allgather, core::collective_algo::ring},
    {core::collective_op::allgather, core::collective_algo::direct},    {core::collective_op::broadcast, core::collective_algo::ring},
    {core::collective_op::broadcast, core::collective_algo::tree},      {core::collective_op::alltoall, core::collective_algo::direct},
};

}  // namespace

TEST_CASE("the engine runs every op to zero wrong elements, host memory and staged device memory") {
    for (bool device : {false, true})
        for (const auto& k : every_case)
            for (unsigned p : {2u, 3u, 5u}) {
                const auto size = core::size_step(k.op, p, core::dtype::fp32) * 3000;
                daemon::emulated_gpu_counters sums;
                CAPTURE(device);
                CAPTURE(core::to_string(k.op));
                CAPTURE(core::to_string(k.algo));
                CAPTURE(p);
                const auto got = run_ranks(k.op, k.algo, p, size, device, sums);
                CHECK(got.wrong == 0);
                const bool reduces = k.op == core::collective_op::allreduce || k.op == core::collective_op::reduce_scatter;
                if (device && reduces) CHECK(sums.sums.load() > 0);  // the sum ran on the "device", not in the step runner
                if (!device) CHECK(sums.sums.load() == 0);
            }
}

TEST_CASE("a corrupting rank is counted wrong with staged device memory too") {
    for (bool device : {false, true}) {
        daemon::emulated_gpu_counters sums;
        CAPTURE(device);
        const auto size = core::size_step(core::collective_op::allreduce, 4, core::dtype::fp32) * 1000;
        const auto got = run_ranks(core::collective_op::allreduce, core::collective_algo::ring, 4, size, device, sums, 2);
        CHECK(got.wrong > 0);
    }
}


TEST_CASE("the first barrier waits twice a rank's own set-up for the others, at least 1 s") {
    CHECK(daemon::first_barrier_grace_s(0.0) == doctest::Approx(1.0));
    CHECK(daemon::first_barrier_grace_s(0.3) == doctest::Approx(1.0));
    CHECK(daemon::first_barrier_grace_s(0.5) == doctest::Approx(1.0));  // continuous where the floor ends
    CHECK(daemon::first_barrier_grace_s(3.0) == doctest::Approx(6.0));
    CHECK(daemon::first_barrier_grace_s(std::nan("")) == doctest::Approx(1.0));
    // A rank frozen before the barrier of a small size is given up on well inside the 10 s bound
    // the fault tests hold a frozen rank to (the stall limit, then this).
    CHECK(std::chrono::duration<double>(daemon::collective_stall_limit).count() + daemon::first_barrier_grace_s(0.1) < 10);
}

}  // namespace collective_engine_test

