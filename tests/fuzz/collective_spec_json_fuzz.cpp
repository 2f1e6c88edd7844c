/// Fuzz target: the body of POST /v1/collectives, which is also the plan every rank reads in
/// its hello (core::collective_spec_from_json under the daemon's limits, hosts normalized).
/// Any input may only end in core::spec_error; see fuzz_checks.hpp for the properties.
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    meshperf::fuzz::check_collective_spec_body(body);
    meshperf::core::run_limits tight;  // as an operator may set them in [limits]
    tight.max_iterations = 1000;
    tight.max_duration_s = 1.0;
    tight.max_bytes_per_point = 1 << 20;
    meshperf::fuzz::check_collective_spec_body(body, tight);
    return 0;
}
