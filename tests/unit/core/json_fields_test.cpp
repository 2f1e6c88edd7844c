#include "core/json_fields.hpp"

#include "core/error.hpp"

#include <doctest/doctest.h>

namespace json_fields_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using nlohmann::json;

TEST_CASE("json_unsigned accepts integers in range and refuses floats, negatives and overflow") {
    CHECK(json_unsigned(json(0), "n") == 0);
    CHECK(json_unsigned(json(std::uint64_t{UINT64_MAX}), "n") == UINT64_MAX);
    CHECK(json_unsigned(json(7), "n", 7) == 7);
    CHECK_THROWS_AS(json_unsigned(json(8), "n", 7), spec_error);
    CHECK_THROWS_AS(json_unsigned(json(-1), "n"), spec_error);
    CHECK_THROWS_AS(json_unsigned(json(3.0), "n"), spec_error);
    CHECK_THROWS_AS(json_unsigned(json(1e300), "n"), spec_error);
    CHECK_THROWS_AS(json_unsigned(json("5"), "n"), spec_error);
    CHECK_THROWS_WITH(json_unsigned(json(-2), "size"), doctest::Contains("'size'"));
}

TEST_CASE("json_signed refuses what does not fit an int64") {
    CHECK(json_signed(json(std::int64_t{INT64_MIN}), "t") == INT64_MIN);
    CHECK(json_signed(json(std::uint64_t{INT64_MAX}), "t") == INT64_MAX);
    CHECK_THROWS_AS(json_signed(json(std::uint64_t{INT64_MAX} + 1), "t"), spec_error);
    CHECK_THROWS_AS(json_signed(json(-9.23237e18), "t"), spec_error);  // the fuzzer's input
    CHECK_THROWS_AS(json_signed(json(nullptr), "t"), spec_error);
}

TEST_CASE("integer lists are read element by element") {
    CHECK(json_unsigned_list(json::parse("[1,2,3]"), "bytes") == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(json_signed_list(json::parse("[-1,2]"), "end_ns") == std::vector<std::int64_t>{-1, 2});
    CHECK_THROWS_AS(json_unsigned_list(json::parse("[1,2.5]"), "bytes"), spec_error);
    CHECK_THROWS_AS(json_signed_list(json::parse("{}"), "end_ns"), spec_error);
}

}  // namespace json_fields_test
