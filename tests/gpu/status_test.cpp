// CUDA availability classification and the error categories (gpu/status.hpp, gpu/error.hpp).
#include "gpu/error.hpp"
#include "gpu/status.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace meshperf::gpu;

namespace {
bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, std::string_view p) { return s.find(p) != std::string::npos; }
}  // namespace

TEST_CASE("status: no driver is driver version 0, whatever the device count says") {
    const auto s = classify_cuda(0, 13000, 35, 0);
    CHECK(s.state == cuda_state::no_driver);
    CHECK_FALSE(s.ok());
    CHECK(starts_with(s.message, "no NVIDIA driver"));
    CHECK(contains(s.message, "--memory host"));
    CHECK(s.device_count == 0);
}

TEST_CASE("status: error 35 with a driver present is a driver too old") {
    const auto s = classify_cuda(12040, 13000, 35, 0);
    CHECK(s.state == cuda_state::driver_too_old);
    CHECK(starts_with(s.message, "NVIDIA driver too old for this CUDA runtime"));
    CHECK(contains(s.message, "supports CUDA 12.4"));
    CHECK(contains(s.message, "built with CUDA 13.0"));
    CHECK(contains(s.message, "R580"));
}

TEST_CASE("status: error 100 and zero devices are no device") {
    auto s = classify_cuda(13000, 13000, 100, 0);
    CHECK(s.state == cuda_state::no_device);
    CHECK(starts_with(s.message, "no CUDA device"));
    CHECK(contains(s.message, "CUDA_VISIBLE_DEVICES"));
    s = classify_cuda(13000, 13000, 0, 0);
    CHECK(s.state == cuda_state::no_device);
}

TEST_CASE("status: other failures are unavailable with the runtime's words") {
    auto s = classify_cuda(13000, 13000, 803, 0);
    CHECK(s.state == cuda_state::unavailable);
    CHECK(contains(s.message, "kernel module"));
    s = classify_cuda(13000, 13000, 999, 0, "cudaErrorUnknown (unknown error)");
    CHECK(s.state == cuda_state::unavailable);
    CHECK(starts_with(s.message, "CUDA unavailable"));
    CHECK(contains(s.message, "cudaErrorUnknown (unknown error)"));
}

TEST_CASE("status: devices present is ok") {
    const auto s = classify_cuda(13000, 13000, 0, 8);
    CHECK(s.ok());
    CHECK(s.device_count == 8);
    CHECK(s.message.empty());
}

TEST_CASE("status: versions and state names") {
    CHECK(format_cuda_version(13000) == "13.0");
    CHECK(format_cuda_version(12080) == "12.8");
    CHECK(format_cuda_version(11070) == "11.7");
    CHECK(to_string(cuda_state::no_driver) == "no_driver");
    CHECK(to_string(cuda_state::driver_too_old) == "driver_too_old");
    CHECK(to_string(cuda_state::no_device) == "no_device");
}

TEST_CASE("status: error categories name themselves and describe codes") {
    CHECK(std::string(cuda_category().name()) == "cuda");
    CHECK(std::string(cu_category().name()) == "cuda driver");
    // cudaErrorMemoryAllocation (2): the runtime's text works without a driver.
    CHECK(contains(make_cuda_error_code(2).message(), "out of memory"));
    CHECK_FALSE(make_cu_error_code(1).message().empty());
    try {
        throw_cuda_error(2, "cudaMalloc(1 GiB) on cuda:0");
    } catch (const std::system_error& e) {
        CHECK(e.code().category() == cuda_category());
        CHECK(starts_with(e.what(), "cudaMalloc(1 GiB) on cuda:0: "));
    }
}
