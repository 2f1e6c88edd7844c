// A data stream's failure named with its rail (core::with_stream_rail): the rail of its
// index in role (rail-major), its addresses and the peer's rail; unchanged without rails.
#include "core/rail_spec.hpp"

#include <doctest/doctest.h>

namespace core = meshperf::core;

TEST_CASE("a failed stream's error names its rail, rail-major; without rails it is unchanged") {
    std::vector<core::rail_pair> rails(3);
    rails[0] = {"ra0", "rb0", "10.62.0.1", "10.62.0.2", 0.2};
    rails[1] = {"ra1", "rb1", "10.62.1.1", "10.62.1.2", 0.2};
    rails[2] = {"ra2", "rb2", "10.62.2.1", "10.62.2.2", std::nullopt};
    CHECK(core::with_stream_rail("Connection timed out", rails, 1, 1) ==
          "Connection timed out (stream 1 on rail ra1, 10.62.1.1 -> 10.62.1.2, peer's rb1)");
    // Two streams per rail: streams 4 and 5 are ra2's, 3 is ra1's.
    CHECK(core::with_stream_rail("reset", rails, 2, 5).find("rail ra2,") != std::string::npos);
    CHECK(core::with_stream_rail("reset", rails, 2, 3).find("rail ra1,") != std::string::npos);
    // No rails, or an index past them (a malformed count): the error as it was.
    CHECK(core::with_stream_rail("reset", {}, 1, 0) == "reset");
    CHECK(core::with_stream_rail("reset", rails, 1, 3) == "reset");
}
