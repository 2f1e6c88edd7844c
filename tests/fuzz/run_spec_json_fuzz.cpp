/// Fuzz target: the body of POST /v1/runs (JSON run spec parsing and validation, then the
/// peer address), as daemon/api/api_routes.cpp handle_submit does it. Any input may only end
/// in core::spec_error; see fuzz_checks.hpp for the properties checked.
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    meshperf::fuzz::check_run_spec_body(std::string_view(reinterpret_cast<const char*>(data), size));
    // The same under tighter limits, as an operator may set them in [limits].
    meshperf::core::run_limits tight;
    tight.max_streams = 2;
    tight.max_iterations = 1000;
    tight.max_duration_s = 1.0;
    tight.max_run_s = 5.0;
    meshperf::fuzz::check_run_spec_body(std::string_view(reinterpret_cast<const char*>(data), size), tight);
    return 0;
}
