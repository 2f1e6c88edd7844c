// client::render_run_table: the precision column says which interval it shows, and results
// written before the method was recorded still render as they did.
#include "client/render/table.hpp"

#include <doctest/doctest.h>

#include <string>

namespace render_table_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

core::point_result latency_point(std::uint64_t size, double achieved) {
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = size;
    core::summary s;
    s.count = 4000;
    s.min = s.p50 = s.p90 = s.p99 = s.p999 = s.max = s.mean = 7000;
    p.rtt_ns = s;
    s.min = s.p50 = s.p90 = s.p99 = s.p999 = s.max = s.mean = 3500;
    p.lat_ns = s;
    p.precision.adaptive = true;
    p.precision.target = 0.01;
    p.precision.achieved = achieved;
    p.precision.met = achieved <= 0.01;
    return p;
}

core::run_result run_of(std::vector<core::point_result> points) {
    core::run_result r;
    r.id = "r-test";
    r.state = "completed";
    r.spec.tests = {core::test_kind::latency};
    r.points = std::move(points);
    return r;
}

}  // namespace

TEST_SUITE("render_table") {

TEST_CASE("precision column: a between-block interval is marked b, an unassessed one ?, with a legend") {
    auto blocks = latency_point(64, 0.58);
    blocks.precision.method = core::precision_method::blocks;
    blocks.precision.blocks = 32;
    auto few = latency_point(128, 0.004);
    few.precision.method = core::precision_method::too_few_blocks;
    few.precision.blocks = 2;
    auto plain = latency_point(256, 0.004);
    plain.precision.method = core::precision_method::samples;
    plain.precision.blocks = 16;
    const auto text = client::render_run_table(run_of({blocks, few, plain}));
    CHECK(text.find("±58%b*") != std::string::npos);
    CHECK(text.find("±0.4%?") != std::string::npos);
    CHECK(text.find("±0.4%\n") != std::string::npos);  // samples: no marker
    CHECK(text.find("\nb the blocks of consecutive samples disagree") != std::string::npos);
    CHECK(text.find("\n? fewer than 3 blocks") != std::string::npos);
}

TEST_CASE("a result without the precision method renders as before: no marker, no legend") {
    const auto text = client::render_run_table(run_of({latency_point(64, 0.004)}));
    CHECK(text.find("±0.4%\n") != std::string::npos);
    CHECK(text.find("blocks") == std::string::npos);
}

}  // TEST_SUITE

}  // namespace render_table_test
