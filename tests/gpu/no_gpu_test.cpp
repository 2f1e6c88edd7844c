// What gpu/ does on a node where CUDA cannot run: every entry point fails with the
// classified sentence (no driver / driver too old / no device), nothing crashes, and the
// inventory says why. These cases check the no-GPU path only where CUDA is unusable; on a
// GPU machine they are skipped (tests/gpu/gpu_device_test.cpp covers that side).
#include "core/error.hpp"
#include "core/gpu_registration.hpp"
#include "gpu/buffer.hpp"
#include "gpu/copy_sweep.hpp"
#include "gpu/dmabuf.hpp"
#include "gpu/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/inventory_json.hpp"
#include "gpu/registration_probe.hpp"
#include "gpu/staging.hpp"
#include "gpu/status.hpp"

#include <doctest/doctest.h>
#include <string>
#include <unistd.h>

using namespace meshperf::gpu;

namespace {

bool no_cuda() { return !cuda_availability().ok(); }

// The sentence that every failure must carry on this node.
std::string expected_prefix() {
    switch (cuda_availability().state) {
    case cuda_state::no_driver: return "no NVIDIA driver";
    case cuda_state::driver_too_old: return "NVIDIA driver too old for this CUDA runtime";
    case cuda_state::no_device: return "no CUDA device";
    default: return "CUDA unavailable";
    }
}

template <typename F>
void check_classified_failure(F&& f) {
    try {
        f();
        FAIL("expected std::system_error");
    } catch (const std::system_error& e) {
        INFO(e.what());
        CHECK(e.code().category() == cuda_category());
        CHECK(std::string(e.what()).find(expected_prefix()) != std::string::npos);
    }
}

}  // namespace

TEST_CASE("no gpu: the probe and the inventory say why" * doctest::skip(!no_cuda())) {
    const auto s = probe_cuda();
    MESSAGE("CUDA here: " << to_string(s.state) << ": " << s.message);
    CHECK_FALSE(s.ok());
    CHECK(s.message.rfind(expected_prefix(), 0) == 0);
    const auto inv = take_inventory();
    CHECK(inv.devices.empty());
    const auto j = to_json(inv);
    CHECK(j["available"] == false);
    CHECK(j["status"] == std::string(to_string(s.state)));
    CHECK(j["message"] == s.message);
    CHECK(j["devices"].empty());
    CHECK(j["runtime_version"] == format_cuda_version(s.runtime_version));
    if (s.state == cuda_state::no_driver) CHECK(j["driver_version"].is_null());
}

TEST_CASE("no gpu: buffers, sweeps and staging fail with the classified reason" * doctest::skip(!no_cuda())) {
    check_classified_failure([] { device_buffer b(0, 4096); });
    check_classified_failure([] { staging st(0, 1u << 20, 4u); });
    copy_options o;
    o.sizes = {4096, 1u << 20};
    o.verify = true;
    for (auto k : {copy_kind::h2d, copy_kind::d2h, copy_kind::d2d}) check_classified_failure([&] { run_copy_sweep(k, o); });
    o.peer_device = 1;
    check_classified_failure([&] { run_copy_sweep(copy_kind::p2p, o); });
    const auto m = run_p2p_matrix(o);
    CHECK(m.pairs.empty());
    CHECK(m.waived.rfind(expected_prefix(), 0) == 0);
}

TEST_CASE("no gpu: pinned host memory needs the driver too" * doctest::skip(!no_cuda())) {
    try {
        pinned_buffer p(4096);
        // A runtime that could pin without a device would be fine as well.
        CHECK(p.data() != nullptr);
    } catch (const std::system_error& e) {
        CHECK(std::string(e.what()).find("cudaHostAlloc") != std::string::npos);
        CHECK(std::string(e.what()).find(expected_prefix()) != std::string::npos);
    }
}

TEST_CASE("no gpu: dma-buf and registration capabilities are off, with the fix named" * doctest::skip(!no_cuda())) {
    CHECK_FALSE(dmabuf_supported(0));
    CHECK_THROWS_AS(export_dmabuf(device_buffer{}), std::invalid_argument);
    const auto caps = registration_caps(0, true);
    CHECK_FALSE(caps.gpu_dmabuf);
    CHECK_FALSE(caps.gpudirect_rdma);
    const auto plan = meshperf::core::plan_gpu_registration(caps, meshperf::core::gpu_registration_preference::automatic);
    CHECK(plan.attempts.empty());
    CHECK(plan.error.find("nvidia-peermem") != std::string::npos);
}

TEST_CASE("no gpu: options are checked before CUDA is touched") {
    copy_options o;
    CHECK_THROWS_AS(run_copy_sweep(copy_kind::h2d, o), meshperf::core::spec_error);  // no sizes
    o.sizes = {0};
    CHECK_THROWS_AS(run_copy_sweep(copy_kind::h2d, o), meshperf::core::spec_error);
    o.sizes = {4096};
    o.device = o.peer_device = 0;
    CHECK_THROWS_AS(run_copy_sweep(copy_kind::p2p, o), meshperf::core::spec_error);
    CHECK_THROWS_AS(device_buffer(0, 0), std::invalid_argument);
}

TEST_CASE("no gpu: dma-buf fd ownership") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    {
        dmabuf_fd a(fds[0]);
        dmabuf_fd b(std::move(a));
        CHECK_FALSE(a);
        CHECK(b.get() == fds[0]);
        dmabuf_fd c;
        c = std::move(b);
        CHECK(c.get() == fds[0]);
    }
    CHECK(::close(fds[0]) == -1);  // closed by the owner
    ::close(fds[1]);
}
