// client/render/matrix_text: a matrix cell is marked bad only in the table of the figure that broke
// its rule; a retest confirms only the rules the first measurement broke too; a small matrix
// says what its links were judged against and why (issue 26, item 5).
#include "analysis/outliers.hpp"
#include "client/render/matrix_text.hpp"
#include "client/render/svg_heatmap.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace matrix_text_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using analysis::link_sample;

namespace {

link_sample measured(std::size_t from, std::size_t to, double gbit, double lat_us) {
    link_sample l;
    l.from = from;
    l.to = to;
    l.gbit_per_s = gbit;
    l.lat_us = lat_us;
    return l;
}

/// Six hosts, every link 10 Gbit/s and 5 us but link 0 -> 1 (index 0) as given.
analysis::matrix_analysis six_hosts(double gbit01, double lat01) {
    std::vector<link_sample> links;
    for (std::size_t a = 0; a < 6; ++a)
        for (std::size_t b = 0; b < 6; ++b)
            if (a != b) links.push_back(a == 0 && b == 1 ? measured(a, b, gbit01, lat01) : measured(a, b, 10, 5));
    return analysis::analyze_matrix(6, links);
}

}  // namespace

TEST_CASE("matrix cells: a link slow in bandwidth is marked in the bandwidth table only") {
    const auto a = six_hosts(2, 5);
    const auto& v = a.links[0];
    REQUIRE(v.bad);
    CHECK(client::matrix_cell("2.000", v, client::matrix_figure::bandwidth) == "2.000*");
    CHECK(client::matrix_cell("5.0", v, client::matrix_figure::latency) == "5.0");
    const auto late = six_hosts(10, 50);
    CHECK(client::matrix_cell("10.000", late.links[0], client::matrix_figure::bandwidth) == "10.000");
    CHECK(client::matrix_cell("50.0", late.links[0], client::matrix_figure::latency) == "50.0*");
}

TEST_CASE("retest note: only what the first measurement showed too is confirmed") {
    const auto a = six_hosts(2, 50);  // after the retest: slow and late
    const auto& now = a.links[0];
    REQUIRE(now.bandwidth_bad);
    REQUIRE(now.latency_bad);
    // The first measurement was slow but not late: the latency is new in the retest.
    CHECK(client::retest_note(now, measured(0, 1, 2.2, 5.5), a) ==
          " (bandwidth confirmed by a retest; latency bad in the retest only)");
    CHECK(client::retest_note(now, measured(0, 1, 2.2, 60), a) == " (confirmed by a retest)");
    const auto slow_only = six_hosts(2, 5);
    CHECK(client::retest_note(slow_only.links[0], measured(0, 1, 2.2, 60), slow_only) == " (confirmed by a retest)");
    CHECK(client::retest_note(now, std::nullopt, a).empty());
    link_sample failed = measured(0, 1, 1, 1);
    failed.reachable = false;
    CHECK(client::retest_note(now, failed, a) == " (bad in the retest; the first measurement failed)");
}

TEST_CASE("reference text: a matrix of 3 hosts says it judged against the better half, and why") {
    std::vector<link_sample> links;
    for (std::size_t x = 0; x < 3; ++x)
        for (std::size_t y = 0; y < 3; ++y)
            if (x != y) links.push_back(measured(x, y, (x == 2 || y == 2) ? 0.1 : 0.2, 5));
    const auto a = analysis::analyze_matrix(3, links);
    const auto text = client::matrix_reference_text(a);
    CHECK(text.find("median bandwidth 0.100 Gbit/s") != std::string::npos);
    CHECK(text.find("links judged against the median of their better half (0.200 Gbit/s, 5.0 us): with 3 hosts one slow "
                    "host's links are half of all links or more") != std::string::npos);
    CHECK(client::matrix_reference_text(six_hosts(2, 5)).find("better half") == std::string::npos);
}

TEST_CASE("heatmaps: a link slow in bandwidth is outlined in the bandwidth heatmap only") {
    const auto a = six_hosts(2, 5);
    const auto bw = client::heatmap_from_analysis(a, {}, client::heatmap_metric::bandwidth);
    const auto lat = client::heatmap_from_analysis(a, {}, client::heatmap_metric::latency);
    CHECK(bw.bad[0][1]);
    CHECK_FALSE(lat.bad[0][1]);
    CHECK_FALSE(bw.bad[1][0]);
}

}  // namespace matrix_text_test
