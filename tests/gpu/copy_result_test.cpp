// Copy sweep figures: batch sizing, summaries and their sanity check (gpu/copy_result.hpp).
#include "core/error.hpp"
#include "gpu/copy_result.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>

using namespace meshperf::gpu;

TEST_CASE("copy: kinds parse in order, without duplicates") {
    CHECK(parse_copy_kinds("h2d,d2h,d2d,p2p") ==
          std::vector<copy_kind>{copy_kind::h2d, copy_kind::d2h, copy_kind::d2d, copy_kind::p2p});
    CHECK(parse_copy_kinds("d2d,h2d,d2d") == std::vector<copy_kind>{copy_kind::d2d, copy_kind::h2d});
    CHECK_THROWS_AS(parse_copy_kinds(""), meshperf::core::spec_error);
    CHECK_THROWS_AS(parse_copy_kinds("h2d,,d2h"), meshperf::core::spec_error);
    CHECK_THROWS_WITH_AS(parse_copy_kinds("h2d,dtoh"), doctest::Contains("unknown copy 'dtoh'"),
                         meshperf::core::spec_error);
    CHECK(to_string(copy_kind::p2p) == "p2p");
}

TEST_CASE("copy: copies per batch fill the batch time, within bounds") {
    CHECK(copies_per_batch(0.001, 0.02, 1000) == 20);
    CHECK(copies_per_batch(0.5, 0.02, 1000) == 1);     // one copy already lasts longer
    CHECK(copies_per_batch(1e-9, 0.02, 1000) == 1000); // capped
    CHECK(copies_per_batch(0.0, 0.02, 1000) == 1000);  // unmeasurably fast: the cap
    CHECK(copies_per_batch(std::numeric_limits<double>::quiet_NaN(), 0.02, 50) == 50);
    CHECK(copies_per_batch(0.001, 0.0, 1000) == 1);
    CHECK(copies_per_batch(0.001, 0.02, 0) == 1);
}

TEST_CASE("copy: GB/s are 10^9 bytes per second") {
    CHECK(gb_per_s(1e9, 1.0) == doctest::Approx(1.0));
    CHECK(gb_per_s(double(1ull << 30), 0.02) == doctest::Approx(53.687091));
    CHECK(gb_per_s(100, 0) == 0);
}

TEST_CASE("copy: summary of batches is median, min, max, and time per copy") {
    const auto p = summarize_batches(1ull << 30, {50.0, 52.0, 49.0, 51.0, 10.0}, 3);
    CHECK(p.gb_per_s == 50.0);
    CHECK(p.gb_per_s_min == 10.0);
    CHECK(p.gb_per_s_max == 52.0);
    CHECK(p.seconds_per_copy == doctest::Approx(double(1ull << 30) / 50e9));
    CHECK(p.batches == 5);
    CHECK(p.copies_per_batch == 3);
    CHECK_NOTHROW(check_sane(p));
    const auto even = summarize_batches(4096, {1.0, 3.0}, 1);
    CHECK(even.gb_per_s == 2.0);
    CHECK_THROWS_AS(summarize_batches(4096, {}, 1), std::invalid_argument);
}

TEST_CASE("copy: insane figures are refused") {
    const auto good = summarize_batches(4096, {1.0, 2.0, 3.0}, 10);
    auto p = good;
    p.gb_per_s = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(check_sane(p), meshperf::core::insane_figure);
    p = good;
    p.gb_per_s_min = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(check_sane(p), meshperf::core::insane_figure);
    p = good;
    p.gb_per_s_max = 1.5;  // below the median
    CHECK_THROWS_AS(check_sane(p), meshperf::core::insane_figure);
    p = good;
    p.seconds_per_copy *= 2;  // disagrees with size / rate
    CHECK_THROWS_AS(check_sane(p), meshperf::core::insane_figure);
    p = good;
    p.size_bytes = 0;
    CHECK_THROWS_AS(check_sane(p), meshperf::core::insane_figure);
    // A zero-time batch makes a zero rate: refused, never reported.
    p = summarize_batches(4096, {0.0}, 1);
    CHECK_THROWS_WITH_AS(check_sane(p), doctest::Contains("not a positive finite number"),
                         meshperf::core::insane_figure);
}

TEST_CASE("copy: verification state") {
    copy_point p;
    CHECK_FALSE(p.verified());
    p.verify = true;
    CHECK(p.verified());
    p.mismatched_bytes = 3;
    CHECK_FALSE(p.verified());
    copy_result r;
    r.points = {copy_point{}, p};
    CHECK(r.verify_failed());
}
