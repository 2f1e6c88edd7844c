// The GPUDirect RDMA registration choice (core/gpu_registration.hpp). No machine here has a
// GPU and an RDMA NIC together, so these cases are what covers that code path.
#include "core/error.hpp"
#include "core/gpu_registration.hpp"

#include <cerrno>
#include <doctest/doctest.h>
#include <vector>

namespace gpu_registration_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

gpu_registration_caps all_caps() {
    gpu_registration_caps c;
    c.gpu_dmabuf = c.verbs_dmabuf = c.kernel_dmabuf = true;
    c.peermem_loaded = c.gpudirect_rdma = true;
    return c;
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("gpu registration: dma-buf first, then nvidia-peermem") {
    const auto plan = plan_gpu_registration(all_caps(), gpu_registration_preference::automatic);
    REQUIRE(plan.attempts.size() == 2);
    CHECK(plan.attempts[0] == gpu_registration_path::dmabuf);
    CHECK(plan.attempts[1] == gpu_registration_path::peermem);
    CHECK(plan.error.empty());
    CHECK(plan.notes.empty());
}

TEST_CASE("gpu registration: each missing dma-buf capability falls back to peermem with a note") {
    for (int missing = 0; missing < 3; ++missing) {
        auto c = all_caps();
        if (missing == 0) c.gpu_dmabuf = false;
        if (missing == 1) c.kernel_dmabuf = false;
        if (missing == 2) c.verbs_dmabuf = false;
        const auto plan = plan_gpu_registration(c, gpu_registration_preference::automatic);
        REQUIRE(plan.attempts.size() == 1);
        CHECK(plan.attempts[0] == gpu_registration_path::peermem);
        REQUIRE(plan.notes.size() == 1);
        CHECK(contains(plan.notes[0], "dma-buf"));
        if (missing == 0) CHECK(contains(plan.notes[0], "DMA_BUF_SUPPORTED"));
        if (missing == 1) CHECK(contains(plan.notes[0], "5.12"));
        if (missing == 2) CHECK(contains(plan.notes[0], "rdma-core"));
    }
}

TEST_CASE("gpu registration: dma-buf only when peermem is not loaded") {
    auto c = all_caps();
    c.peermem_loaded = false;
    const auto plan = plan_gpu_registration(c, gpu_registration_preference::automatic);
    REQUIRE(plan.attempts.size() == 1);
    CHECK(plan.attempts[0] == gpu_registration_path::dmabuf);
    REQUIRE(plan.notes.size() == 1);
    CHECK(contains(plan.notes[0], "nvidia_peermem module is not loaded"));
}

TEST_CASE("gpu registration: peermem needs GPUDirect RDMA support on the GPU") {
    auto c = all_caps();
    c.gpu_dmabuf = false;
    c.gpudirect_rdma = false;
    const auto plan = plan_gpu_registration(c, gpu_registration_preference::automatic);
    CHECK(plan.attempts.empty());
    CHECK(contains(plan.error, "GPU_DIRECT_RDMA_SUPPORTED"));
}

TEST_CASE("gpu registration: nothing available names both fixes") {
    gpu_registration_caps none;  // every flag false
    const auto plan = plan_gpu_registration(none, gpu_registration_preference::automatic);
    CHECK(plan.attempts.empty());
    CHECK(contains(plan.error, "modprobe nvidia-peermem"));
    CHECK(contains(plan.error, "dma-buf capable"));
    CHECK(contains(plan.error, "--memory host"));
    CHECK(plan.notes.size() == 2);
}

TEST_CASE("gpu registration: an explicit preference allows only that path") {
    auto c = all_caps();
    auto plan = plan_gpu_registration(c, gpu_registration_preference::peermem);
    REQUIRE(plan.attempts.size() == 1);
    CHECK(plan.attempts[0] == gpu_registration_path::peermem);

    plan = plan_gpu_registration(c, gpu_registration_preference::dmabuf);
    REQUIRE(plan.attempts.size() == 1);
    CHECK(plan.attempts[0] == gpu_registration_path::dmabuf);

    c.gpu_dmabuf = false;
    plan = plan_gpu_registration(c, gpu_registration_preference::dmabuf);
    CHECK(plan.attempts.empty());
    CHECK(contains(plan.error, "dma-buf"));
    CHECK(contains(plan.error, "R515"));
    CHECK(contains(plan.error, "--gpu-registration auto"));

    c = all_caps();
    c.peermem_loaded = false;
    plan = plan_gpu_registration(c, gpu_registration_preference::peermem);
    CHECK(plan.attempts.empty());
    CHECK(contains(plan.error, "modprobe nvidia-peermem"));
}

TEST_CASE("gpu registration: preference parsing and path names") {
    CHECK(parse_gpu_registration_preference("auto") == gpu_registration_preference::automatic);
    CHECK(parse_gpu_registration_preference("dmabuf") == gpu_registration_preference::dmabuf);
    CHECK(parse_gpu_registration_preference("peermem") == gpu_registration_preference::peermem);
    CHECK_THROWS_AS(parse_gpu_registration_preference("gdr"), spec_error);
    CHECK(to_string(gpu_registration_path::dmabuf) == "dmabuf");
    CHECK(to_string(gpu_registration_path::peermem) == "peermem");
}

TEST_CASE("gpu registration: kernel release parsing") {
    CHECK(kernel_supports_rdma_dmabuf("5.12.0"));
    CHECK(kernel_supports_rdma_dmabuf("5.15.0-91-generic"));
    CHECK(kernel_supports_rdma_dmabuf("6.1.0-13-amd64"));
    CHECK(kernel_supports_rdma_dmabuf("10.0"));
    CHECK_FALSE(kernel_supports_rdma_dmabuf("5.11.22"));
    CHECK_FALSE(kernel_supports_rdma_dmabuf("4.18.0-513.el8.x86_64"));
    CHECK_FALSE(kernel_supports_rdma_dmabuf(""));
    CHECK_FALSE(kernel_supports_rdma_dmabuf("linux"));
    CHECK_FALSE(kernel_supports_rdma_dmabuf("6"));
}

TEST_CASE("gpu registration: failure explanation names each call, errno and the fix") {
    auto c = all_caps();
    auto msg = explain_registration_failure(
        c, {{gpu_registration_path::dmabuf, EOPNOTSUPP}, {gpu_registration_path::peermem, EFAULT}});
    CHECK(contains(msg, "ibv_reg_dmabuf_mr failed"));
    CHECK(contains(msg, "ibv_reg_mr on the device pointer failed"));
    CHECK(contains(msg, "Bad address"));
    CHECK(contains(msg, "nvidia-peermem matches the running NVIDIA driver"));
    CHECK(contains(msg, "RLIMIT_MEMLOCK"));

    c.peermem_loaded = false;
    msg = explain_registration_failure(c, {{gpu_registration_path::dmabuf, EINVAL}});
    CHECK(contains(msg, "modprobe nvidia-peermem"));
    CHECK(contains(msg, "Invalid argument"));

    msg = explain_registration_failure(c, {{gpu_registration_path::peermem, 0}});
    CHECK(contains(msg, "ibv_reg_mr on the device pointer failed."));
    CHECK(contains(msg, "dma-buf capable"));
}

TEST_CASE("gpu registration: attempts run in plan order and stop at the first success") {
    const auto plan = plan_gpu_registration(all_caps(), gpu_registration_preference::automatic);
    std::vector<gpu_registration_path> tried;
    // dma-buf refused (an old provider), peermem works: the result says peermem.
    auto out = try_registration_paths(plan, [&](gpu_registration_path p) {
        tried.push_back(p);
        return p == gpu_registration_path::dmabuf ? EOPNOTSUPP : 0;
    });
    REQUIRE(out.used.has_value());
    CHECK(*out.used == gpu_registration_path::peermem);
    REQUIRE(out.failures.size() == 1);
    CHECK(out.failures[0].path == gpu_registration_path::dmabuf);
    CHECK(out.failures[0].error_number == EOPNOTSUPP);
    CHECK(tried.size() == 2);

    // dma-buf works: peermem is never tried.
    tried.clear();
    out = try_registration_paths(plan, [&](gpu_registration_path p) {
        tried.push_back(p);
        return 0;
    });
    CHECK(*out.used == gpu_registration_path::dmabuf);
    CHECK(out.failures.empty());
    CHECK(tried == std::vector<gpu_registration_path>{gpu_registration_path::dmabuf});

    // Both fail: no path, both failures kept for the explanation.
    out = try_registration_paths(plan, [](gpu_registration_path p) { return p == gpu_registration_path::dmabuf ? EINVAL : EFAULT; });
    CHECK_FALSE(out.used.has_value());
    REQUIRE(out.failures.size() == 2);
    const auto msg = explain_registration_failure(all_caps(), out.failures);
    CHECK(contains(msg, "ibv_reg_dmabuf_mr failed"));
    CHECK(contains(msg, "Bad address"));

    // An empty plan tries nothing.
    gpu_registration_plan none;
    out = try_registration_paths(none, [&](gpu_registration_path) -> int { FAIL("called"); return 0; });
    CHECK_FALSE(out.used.has_value());
    CHECK(out.failures.empty());
}

}  // namespace gpu_registration_test
