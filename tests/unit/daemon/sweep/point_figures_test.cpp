// daemon::assemble_point and flows_precise_enough: a bandwidth point's precision includes
// the variation between blocks of intervals, and needs enough of them before it is met; its
// TCP counters are kept, checked, and warned about above a 1% retransmit share.
#include "core/error.hpp"
#include "daemon/sweep/point_figures.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace point_figures_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

/// A tracker fed `intervals` 25 ms intervals; gbit(i) gives interval i's rate.
core::flow_tracker tracked(int intervals, double (*gbit)(int)) {
    core::flow_tracker t(1, 0.0);
    std::uint64_t bytes = 0;
    t.add(0.0, std::vector<std::uint64_t>{bytes});
    for (int i = 1; i <= intervals; ++i) {
        bytes += static_cast<std::uint64_t>(gbit(i) * 1e9 / 8 * 0.025);
        t.add(0.025 * i, std::vector<std::uint64_t>{bytes});
    }
    return t;
}

core::run_spec adaptive_spec() {
    core::run_spec s;
    s.tests = {core::test_kind::bandwidth};
    s.precision = 0.01;
    return s;
}

}  // namespace

TEST_SUITE("point_figures") {

TEST_CASE("may_stop_at_cap: at the cap once every flow moved a byte; a flow with none waits at most first_bytes_grace_s") {
    core::flow_tracker moving(1, 0.1), slow(1, 0.1), silent(1, 0.1);
    const std::vector<std::uint64_t> some{1}, none{0};
    moving.add(0.5, std::vector<std::uint64_t>{1000});
    slow.add(0.05, some);  // one byte in the warm-up, nothing since: a lossy path is never waited for
    slow.add(1.0, some);
    silent.add(1.0, none);  // streams still starting
    const std::vector<daemon::tracked_flow> going{{"initiator->peer", &moving}, {"peer->initiator", &slow}};
    const std::vector<daemon::tracked_flow> starting{{"initiator->peer", &moving}, {"peer->initiator", &silent}};
    CHECK_FALSE(daemon::may_stop_at_cap(going, 0.99, 1.0));
    CHECK(daemon::may_stop_at_cap(going, 1.0, 1.0));
    CHECK_FALSE(daemon::may_stop_at_cap(starting, 1.0, 1.0));
    CHECK_FALSE(daemon::may_stop_at_cap(starting, 1.0 + core::first_bytes_grace_s - 0.01, 1.0));
    CHECK(daemon::may_stop_at_cap(starting, 1.0 + core::first_bytes_grace_s, 1.0));
}

TEST_CASE("flows_precise_enough: a steady flow needs min_blocks_for_target intervals") {
    const auto steady = [](int) { return 10.0; };
    const auto few = tracked(static_cast<int>(core::min_blocks_for_target) - 1, steady);
    const auto enough = tracked(static_cast<int>(core::min_blocks_for_target), steady);
    CHECK_FALSE(daemon::flows_precise_enough({{"initiator->peer", &few}}, 0.01));
    CHECK(daemon::flows_precise_enough({{"initiator->peer", &enough}}, 0.01));
}

TEST_CASE("flows_precise_enough: a flow whose rate holds two levels in stretches is not precise") {
    // 256 intervals, 10 or 12 Gbit/s for 16 intervals at a time: about ±1% taken interval by
    // interval, about ±3% between blocks.
    const auto t = tracked(256, [](int i) { return ((i - 1) / 16) % 2 ? 12.0 : 10.0; });
    CHECK(t.relative_half_width() < 0.02);
    CHECK_FALSE(daemon::flows_precise_enough({{"initiator->peer", &t}}, 0.02));
}

TEST_CASE("assemble_point records the method, the blocks and says why the target was missed") {
    const auto t = tracked(256, [](int i) { return ((i - 1) / 16) % 2 ? 12.0 : 10.0; });
    const auto spec = adaptive_spec();
    daemon::point_inputs in{spec, core::test_kind::bandwidth, 1 << 20};
    in.tracked_flows = {{"initiator->peer", &t}};
    const auto p = daemon::assemble_point(in);
    REQUIRE(p.precision.method.has_value());
    CHECK(*p.precision.method == core::precision_method::blocks);
    CHECK(p.precision.blocks == 32);
    CHECK(p.precision.block_values.size() == 32);
    CHECK(p.precision.block_values.front() == doctest::Approx(10.0));
    CHECK_FALSE(p.precision.met);
    REQUIRE_FALSE(p.warnings.empty());
    CHECK(p.warnings[0].rfind("precision target not met", 0) == 0);
    CHECK(p.warnings[0].find("between 32 blocks") != std::string::npos);
}

TEST_CASE("assemble_point keeps the TCP counters and warns when more than 1% of the segments were retransmitted") {
    const auto t = tracked(64, [](int) { return 10.0; });
    const auto spec = adaptive_spec();
    const auto has_retransmit_warning = [](const core::point_result& p) {
        for (const auto& w : p.warnings)
            if (w.rfind("TCP retransmits: ", 0) == 0) return true;
        return false;
    };
    daemon::point_inputs in{spec, core::test_kind::bandwidth, 1 << 20};
    in.tracked_flows = {{"initiator->peer", &t}};
    in.tcp_counters = core::tcp_point_counters{37, 12034, {150, 900}, {10, 80}};
    auto p = daemon::assemble_point(in);
    REQUIRE(p.tcp_counters.has_value());
    CHECK(p.tcp_counters->retransmits == 37);
    CHECK_FALSE(has_retransmit_warning(p));
    in.tcp_counters = core::tcp_point_counters{412, 20311, {150, 900}, {10, 80}};
    p = daemon::assemble_point(in);
    CHECK(has_retransmit_warning(p));
    in.tcp_counters = core::tcp_point_counters{0, 0, {0, 0}, {0, 0}};  // bytes moved, no segment: not sane
    CHECK_THROWS_AS(daemon::assemble_point(in), core::insane_figure);
}

TEST_CASE("assemble_point: verified says what was checked, not what --verify asked for") {
    const auto t = tracked(64, [](int) { return 10.0; });
    auto spec = adaptive_spec();
    const auto point = [&](std::uint64_t here, std::uint64_t peer) {
        daemon::point_inputs in{spec, core::test_kind::bandwidth, 1 << 20};
        in.tracked_flows = {{"initiator->peer", &t}};
        in.verified_here = here;
        in.verified_at_peer = peer;
        return daemon::assemble_point(in);
    };
    spec.verify = true;
    auto p = point(0, 0);  // asked, but no end checked a byte: not verified
    CHECK_FALSE(p.verified);
    CHECK(p.verified_bytes == 0);
    CHECK(p.verified_by.empty());
    p = point(0, 5000);
    CHECK(p.verified);
    CHECK(p.verified_bytes == 5000);
    CHECK(p.verified_by == "peer");
    p = point(300, 0);
    CHECK(p.verified_by == "initiator");
    p = point(300, 5000);
    CHECK(p.verified_bytes == 5300);
    CHECK(p.verified_by == "both");
    spec.verify = false;  // counts without --verify are not taken as verification
    CHECK_FALSE(point(300, 5000).verified);
}

}  // TEST_SUITE

}  // namespace point_figures_test
