// core/units: bytes, bit rates and their text. The values are computed by hand; the two
// roundings of one conversion (÷ 10^9 and × 8e-9) are pinned to the last bit, because the
// results store and print each figure with 17 digits.
#include "core/figure_text.hpp"
#include "core/units.hpp"

#include <cmath>
#include <cstdint>
#include <doctest/doctest.h>
#include <random>

namespace units_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

TEST_CASE("units: the constants") {
    CHECK(bits_per_byte == 8);
    CHECK(giga == 1e9);
    CHECK(bytes_per_s_per_gbit_per_s == 125e6);
    static_assert(gbit_per_s(1.25e9, 1) == 10);  // usable in constant expressions
}

TEST_CASE("units: measured rates from bytes and seconds") {
    CHECK(gbit_per_s(1.25e9, 1) == 10);           // 10^10 bit in 1 s
    CHECK(gbit_per_s(1.25e9, 2) == 5);
    CHECK(gbit_per_s(1048576, 0.001) == doctest::Approx(8.388608));  // 1 MiB per ms
    CHECK(gbit_per_s(3, 1) == 2.4e-08);           // the quotient rounded once
    CHECK(gbyte_per_s(3e9, 2) == 1.5);
    CHECK(gbyte_per_s(1e9, 1) == 1);
    CHECK(gbit_from_bytes_per_s(1.25e9) == 10);
    CHECK(gbit_from_bytes_per_s(3) == 2.4e-08);
    CHECK(gbyte_from_bytes_per_s(2.5e9) == 2.5);
    CHECK(gbyte_from_bytes_per_s(3) == 3e-09);
}

TEST_CASE("units: times from bytes and rates") {
    CHECK(seconds_at_gbit_per_s(1.25e9, 10) == 1);
    CHECK(seconds_at_gbit_per_s(1e6, 8) == doctest::Approx(0.001));  // 8 Mbit at 8 Gbit/s
    CHECK(seconds_at_gbyte_per_s(3e9, 1.5) == 2);
    CHECK(seconds_at_gbyte_per_s(1e9, 1) == 1);
}

TEST_CASE("units: exact conversions") {
    CHECK(gbyte_from_gbit(9.41) == 1.17625);
    CHECK(gbyte_from_gbit(100) == 12.5);
    CHECK(gbit_from_gbyte(1.5) == 12);
    CHECK(gbit_from_gbyte(gbyte_from_gbit(9.41)) == 9.41);
    CHECK(bit_per_s_from_gbit(2.5) == 2.5e9);
    CHECK(bit_per_s_from_gbit(0) == 0);
}

TEST_CASE("units: the model's rates multiply by 8e-9 and 1e-9") {
    CHECK(gbit_from_bytes_per_s_by_factor(1.25e9) == doctest::Approx(10));
    CHECK(gbyte_from_bytes_per_s_by_factor(2.5e9) == doctest::Approx(2.5));
    CHECK(gbit_per_s_by_factor(1.25e9, 2) == doctest::Approx(5));
    CHECK(bytes_per_s_from_gbit_by_factor(8) == 999999999.9999999);  // 8e-9 is not exact
    CHECK(bytes_per_s_from_gbit_by_factor(gbit_from_bytes_per_s_by_factor(1.25e9)) == doctest::Approx(1.25e9));
}

TEST_CASE("units: the two roundings differ in the last bit, and each keeps its own") {
    // Why both forms exist: 3 × 8 / 10^9 and 3 × 8e-9 are different doubles.
    CHECK(gbit_from_bytes_per_s(3) == 2.4e-08);
    CHECK(gbit_from_bytes_per_s_by_factor(3) == 2.4000000000000003e-08);
    CHECK(gbit_per_s(3, 1) != gbit_per_s_by_factor(3, 1));
    CHECK(gbyte_from_bytes_per_s(3) == 3e-09);
    CHECK(gbyte_from_bytes_per_s_by_factor(3) == 3.0000000000000004e-09);
}

TEST_CASE("units: each function evaluates the order its comment gives") {
    // The call sites replaced hand-written expressions; a "simpler" body would change
    // stored and printed figures in their last bit. Compared bit for bit on many inputs.
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> exponent(-3, 12);
    const auto any = [&] { return std::pow(10.0, exponent(rng)); };
    for (int i = 0; i < 20000; ++i) {
        const double b = std::floor(any()) + 1, s = any() * 1e-6, r = any(), g = any();
        REQUIRE(gbit_per_s(b, s) == b * 8.0 / s / 1e9);
        REQUIRE(gbit_from_bytes_per_s(r) == r * 8.0 / 1e9);
        REQUIRE(gbyte_per_s(b, s) == b / s / 1e9);
        REQUIRE(gbyte_from_bytes_per_s(r) == r / 1e9);
        REQUIRE(seconds_at_gbit_per_s(b, g) == b * 8.0 / (g * 1e9));
        REQUIRE(seconds_at_gbyte_per_s(b, g) == b / (g * 1e9));
        REQUIRE(gbyte_from_gbit(g) == g / 8.0);
        REQUIRE(gbit_from_gbyte(g) == 8 * g);
        REQUIRE(bit_per_s_from_gbit(g) == g * 1e9);
        REQUIRE(gbit_per_s_by_factor(b, s) == b * 8e-9 / s);
        REQUIRE(gbit_from_bytes_per_s_by_factor(r) == r * 8e-9);
        REQUIRE(gbyte_from_bytes_per_s_by_factor(r) == r * 1e-9);
        REQUIRE(bytes_per_s_from_gbit_by_factor(g) == g / 8e-9);
        // × 8 is exact, so the rate of bytes in seconds is the rate of bytes/s.
        REQUIRE(gbit_per_s(b, s) == gbit_from_bytes_per_s(b / s));
        // 8.0 / 1e9, as flow_tracker wrote it, is the double 8e-9.
        REQUIRE(r * (8.0 / 1e9) == gbit_from_bytes_per_s_by_factor(r));
    }
}

TEST_CASE("units: a β as text") {
    CHECK(gbit_gbyte_text(1.25e9) == "10 Gbit/s (1.25 GB/s)");
    CHECK(gbit_gbyte_text(11.7625e9) == "94.1 Gbit/s (11.76 GB/s)");
    CHECK(gbit_gbyte_text(11.7625e9, 3) == "94.1 Gbit/s (11.8 GB/s)");
    CHECK(gbit_gbyte_text(15375) == "0.000123 Gbit/s (0.00001538 GB/s)");  // never an exponent
}

TEST_CASE("message_figure: the figures in a check's reason and an outlier's why") {
    CHECK(message_figure(412.3) == "412");
    CHECK(message_figure(100) == "100");
    CHECK(message_figure(23.14) == "23.1");
    CHECK(message_figure(9.414) == "9.41");
    CHECK(message_figure(1) == "1.00");
    CHECK(message_figure(0.5) == "0.5");
    CHECK(message_figure(0.000123456) == "0.000123");
    CHECK(message_figure(-12.34) == "-12.3");
    CHECK(message_figure(0) == "0");
}

}  // namespace units_test
