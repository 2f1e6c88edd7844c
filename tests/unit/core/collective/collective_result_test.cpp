// core/collective/result: nccl-tests' time (the mean over iterations of each iteration's
// slowest rank), algbw and busbw, the spread over ranks, the slowest rank and ring link,
// incast fairness, the sanity checks that refuse bad timing, and the JSON and CSV forms.
#include "core/collective/result.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collective_result_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Approx;
using nlohmann::json;

namespace {

using series = std::vector<std::vector<double>>;
using counts = std::vector<std::uint64_t>;
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

// `ranks` ranks that each take `seconds` for each of `iterations` iterations.
series same(unsigned ranks, std::size_t iterations, double seconds) {
    return series(ranks, std::vector<double>(iterations, seconds));
}

// Ring all-reduce over 4 ranks of 4 MB of fp32: 100 µs an iteration, 80 µs of it sending.
collective_point allreduce_4() {
    return assemble_collective_point(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4'000'000,
                                     same(4, 5, 100e-6), same(4, 5, 80e-6), counts{0, 0, 0, 0});
}

// Incast from ranks 1..p−1 to rank 0 of `size` bytes each: 1 ms an iteration for every rank
// but `slow`, which takes 2 ms (and so does the receiver, which waits for it).
collective_point incast(unsigned ranks, std::optional<unsigned> slow, std::uint64_t size = 1'000'000) {
    auto t = same(ranks, 3, 1e-3);
    if (slow) t[*slow] = t[0] = std::vector<double>(3, 2e-3);
    return assemble_collective_point(collective_op::incast, collective_algo::direct, ranks, dtype::fp32, size, t, {}, {});
}

std::size_t columns(const std::string& row) {
    std::size_t n = 1;
    bool quoted = false;
    for (char c : row) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++n;
    }
    return n;
}

collective_result sample_run() {
    collective_result r;
    r.id = "c-20261201-192000-a1b2c3";
    r.state = run_state::completed;
    r.created_at = "2026-12-01T19:20:00.000Z";
    r.finished_at = "2026-12-01T19:20:04.500Z";
    r.spec.hosts = {"node0:7470", "node1:7470", "node2:7470", "node3:7470"};
    r.spec.ops = {collective_op::allreduce, collective_op::incast};
    r.spec.sizes = {4'000'000};
    for (unsigned i = 0; i < 4; ++i) {
        host_info h;
        h.address = r.spec.hosts[i];
        h.hostname = "node" + std::to_string(i);
        h.cpu_count = 16;
        r.hosts.push_back(h);
    }
    r.points = {allreduce_4(), incast(4, 3, 4'000'000)};
    r.warnings = {"rank 3 is 2.0x slower than rank 1"};
    return r;
}

}  // namespace

TEST_CASE("collective result: ring all-reduce over 4 ranks, busbw = algbw × 1.5") {
    const auto p = allreduce_4();
    CHECK(p.count == 1'000'000);
    CHECK(p.iterations == 5);
    CHECK(p.time_s == Approx(100e-6));
    CHECK(p.algbw_gbyte_per_s == Approx(40));  // 4e6 B / 100 µs
    CHECK(p.busbw_gbyte_per_s == Approx(60));  // × 2·3/4
    CHECK(p.busbw_gbyte_per_s == Approx(p.algbw_gbyte_per_s * 1.5));
    CHECK(p.algbw_gbit_per_s == Approx(320));
    CHECK(p.busbw_gbit_per_s == Approx(480));
    CHECK(p.wrong == 0u);
    CHECK(p.spread.max_over_min == Approx(1));
    REQUIRE(p.links.size() == 4);
    for (unsigned r = 0; r < 4; ++r) {
        CHECK(p.links[r].from == r);
        CHECK(p.links[r].to == (r + 1) % 4);
        CHECK(p.links[r].bytes == 6'000'000);  // 2(p−1) chunks of S/p
        CHECK(p.links[r].gbit_per_s == Approx(600));  // 6e6 B × 8 / 80 µs
    }
    CHECK(to_string(*p.slowest_link) == "rank 0 -> rank 1");  // a tie: the lowest rank
    CHECK(redop_name(p.op) == "sum");
    CHECK_FALSE(p.incast);
}

TEST_CASE("collective result: ring all-gather over 8 ranks, busbw = algbw × 7/8") {
    const auto p = assemble_collective_point(collective_op::allgather, collective_algo::ring, 8, dtype::fp32, 8'000'000,
                                             same(8, 4, 1e-3), same(8, 4, 0.5e-3), counts(8, 0));
    CHECK(p.count == 2'000'000);
    CHECK(p.time_s == Approx(1e-3));
    CHECK(p.algbw_gbyte_per_s == Approx(8));
    CHECK(p.busbw_gbyte_per_s == Approx(7));
    REQUIRE(p.links.size() == 8);
    CHECK(p.links[7].to == 0);
    CHECK(p.links[7].bytes == 7'000'000);  // p−1 blocks of S/p
    CHECK(p.links[7].gbit_per_s == Approx(112));
    CHECK(redop_name(p.op) == "none");
}

TEST_CASE("collective result: chain broadcast over 3 ranks, busbw = algbw; the last rank sends nothing") {
    auto sends = same(3, 2, 1.6e-3);
    sends[2].clear();
    const auto p = assemble_collective_point(collective_op::broadcast, collective_algo::ring, 3, dtype::bf16, 4'000'000,
                                             same(3, 2, 2e-3), sends, {});
    CHECK(p.count == 2'000'000);
    CHECK(p.algbw_gbyte_per_s == Approx(2));
    CHECK(p.busbw_gbyte_per_s == Approx(2));
    REQUIRE(p.links.size() == 2);
    CHECK(to_string(p.links[1]) == "rank 1 -> rank 2");
    CHECK(p.links[1].bytes == 4'000'000);
    CHECK(p.links[1].gbit_per_s == Approx(20));
    CHECK_FALSE(p.wrong);  // not verified
    CHECK(ring_link_bytes(collective_op::broadcast, 3, dtype::bf16, 4'000'000, 2) == 0);
    CHECK_THROWS_AS(assemble_collective_point(collective_op::broadcast, collective_algo::ring, 3, dtype::bf16, 4'000'000,
                                              same(3, 2, 2e-3), same(3, 2, 1.6e-3), {}),
                    insane_figure);
}

TEST_CASE("collective result: direct all-to-all over 4 ranks, busbw = algbw × 3/4, no links") {
    const auto p = assemble_collective_point(collective_op::alltoall, collective_algo::direct, 4, dtype::fp32, 4'000'000,
                                             same(4, 3, 0.5e-3), {}, counts{0, 2, 0, 1});
    CHECK(p.algbw_gbyte_per_s == Approx(8));
    CHECK(p.busbw_gbyte_per_s == Approx(6));
    CHECK(p.links.empty());
    CHECK_FALSE(p.slowest_link);
    CHECK(p.wrong == 3u);  // summed over ranks
}

TEST_CASE("collective result: ring link bytes, at the busiest rank, are what collective_spec counts, for p = 2..17") {
    for (unsigned p = 2; p <= 17; ++p)
        for (auto op : {collective_op::allreduce, collective_op::allgather, collective_op::reduce_scatter, collective_op::broadcast})
            for (std::uint64_t elements : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}, std::uint64_t{4099}}) {
                const auto size = size_step(op, p, dtype::bf16) * elements;
                std::uint64_t busiest = 0;
                for (unsigned r = 0; r < p; ++r) busiest = std::max(busiest, ring_link_bytes(op, p, dtype::bf16, size, r));
                CAPTURE(p);
                CAPTURE(size);
                CHECK(busiest == collective_rank_bytes(op, collective_algo::ring, p, dtype::bf16, size));
            }
    CHECK_THROWS_AS(ring_link_bytes(collective_op::alltoall, 4, dtype::fp32, 4096, 0), spec_error);
    CHECK_THROWS_AS(ring_link_bytes(collective_op::allreduce, 4, dtype::fp32, 4096, 4), spec_error);
    CHECK_THROWS_AS(ring_link_bytes(collective_op::allreduce, 1, dtype::fp32, 4096, 0), spec_error);
}

TEST_CASE("collective result: the time is the mean over iterations of the slowest rank, not the slowest rank's mean") {
    // The slowest rank changes: iteration maxima 2, 3 and 7 ms.
    const series t{{1e-3, 3e-3, 1e-3}, {2e-3, 1e-3, 7e-3}};
    const auto p = assemble_collective_point(collective_op::alltoall, collective_algo::direct, 2, dtype::fp32, 8000, t, {}, {});
    CHECK(p.time_s == Approx(4e-3));
    CHECK(p.time_min_s == Approx(2e-3));
    CHECK(p.time_p50_s == Approx(3e-3));
    CHECK(p.time_max_s == Approx(7e-3));
    CHECK(p.rank_time_s[0] == Approx(5e-3 / 3));
    CHECK(p.rank_time_s[1] == Approx(10e-3 / 3));
    CHECK(p.spread.max_s == Approx(10e-3 / 3));  // the max of the means is less
    CHECK(p.spread.max_s < p.time_s);
    CHECK(p.spread.max_over_min == Approx(2));
    CHECK(p.slowest_rank == 1);
    CHECK(p.algbw_gbyte_per_s == Approx(8000 / 4e-3 / 1e9));
}

TEST_CASE("collective result: the slowest rank and the slowest ring link are found") {
    auto t = same(4, 3, 1e-3);
    t[3] = {1.4e-3, 1.5e-3, 1.6e-3};
    auto sends = same(4, 3, 0.5e-3);
    sends[2] = std::vector<double>(3, 1e-3);
    const auto p = assemble_collective_point(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4'000'000, t,
                                             sends, {});
    CHECK(p.slowest_rank == 3);
    CHECK(p.time_s == Approx(1.5e-3));
    CHECK(p.spread.max_over_min == Approx(1.5));
    REQUIRE(p.slowest_link);
    CHECK(to_string(*p.slowest_link) == "rank 2 -> rank 3");
    CHECK(p.slowest_link->send_s == Approx(1e-3));
    CHECK(p.slowest_link->gbit_per_s == Approx(48));  // 6e6 B × 8 / 1 ms

    sends[2] = std::vector<double>(3, 0.5e-3);
    sends[3] = std::vector<double>(3, 0.9e-3);  // the link that closes the ring
    const auto q = assemble_collective_point(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4'000'000, t,
                                             sends, {});
    CHECK(to_string(*q.slowest_link) == "rank 3 -> rank 0");
}

TEST_CASE("collective result: incast goodput per sender, total at the receiver, Jain's fairness") {
    const auto equal = incast(4, std::nullopt);
    REQUIRE(equal.incast);
    REQUIRE(equal.incast->sender_gbit_per_s.size() == 3);
    for (double rate : equal.incast->sender_gbit_per_s) CHECK(rate == Approx(8));  // 1 MB × 8 / 1 ms
    CHECK(equal.incast->total_gbit_per_s == Approx(24));
    CHECK(equal.incast->fairness == Approx(1));
    CHECK(equal.busbw_gbit_per_s == Approx(24));  // factor p−1: the receiver's total

    // One sender of four at half the rate: (8+8+8+4)² / (4 · (3·64 + 16)) = 49/52.
    const auto half = incast(5, 4);
    CHECK(half.incast->sender_gbit_per_s.back() == Approx(4));
    CHECK(half.incast->fairness == Approx(49.0 / 52.0));
    CHECK(half.incast->total_gbit_per_s == Approx(16));  // 4 MB in the receiver's 2 ms
    CHECK(half.slowest_rank == 0);  // the receiver and rank 4 took as long: the lower rank
}

TEST_CASE("collective result: insane timing is refused before anything is reported") {
    const auto ring2 = [](const series& t, const series& sends, const counts& wrong = {}) {
        return assemble_collective_point(collective_op::allreduce, collective_algo::ring, 2, dtype::fp32, 4096, t, sends, wrong);
    };
    const auto ok = same(2, 3, 1e-3), ok_send = same(2, 3, 0.5e-3);
    CHECK_NOTHROW(ring2(ok, ok_send));
    for (double bad : {nan_v, inf_v, -inf_v, 0.0, -1e-3}) {
        CAPTURE(bad);
        auto t = ok;
        t[1][2] = bad;
        CHECK_THROWS_AS(ring2(t, ok_send), insane_figure);
        auto s = ok_send;
        s[0][1] = bad;
        CHECK_THROWS_AS(ring2(ok, s), insane_figure);
    }
    auto longer = ok_send;
    longer[1][0] = 1.5e-3;  // sends for longer than the iteration took
    CHECK_THROWS_AS(ring2(ok, longer), insane_figure);
    auto ragged = ok;
    ragged[1].pop_back();
    CHECK_THROWS_WITH_AS(ring2(ragged, ok_send),
                         "allreduce of 4096 bytes over 2 ranks: rank 1 reports 2 iteration times, not 3: every rank reports every iteration",
                         insane_figure);
    auto ragged_send = ok_send;
    ragged_send[0].push_back(0.5e-3);
    CHECK_THROWS_AS(ring2(ok, ragged_send), insane_figure);
    CHECK_THROWS_AS(ring2(same(2, 0, 1e-3), same(2, 0, 1e-3)), insane_figure);  // no iterations
    CHECK_THROWS_AS(ring2({}, {}), insane_figure);
    CHECK_THROWS_AS(ring2(same(3, 3, 1e-3), ok_send), insane_figure);  // vectors sized to the wrong ranks
    CHECK_THROWS_AS(ring2(same(1, 3, 1e-3), ok_send), insane_figure);
    CHECK_THROWS_AS(ring2(ok, same(1, 3, 0.5e-3)), insane_figure);
    CHECK(ring2(ok, {}).links.empty());  // a ring without send times: links not timed (a test case below)
    CHECK_THROWS_AS(ring2(ok, ok_send, counts{0, 0, 0}), insane_figure);    // wrong elements of 3 ranks
    CHECK_THROWS_AS(ring2(ok, ok_send, counts{0}), insane_figure);
    CHECK_THROWS_AS(assemble_collective_point(collective_op::alltoall, collective_algo::direct, 2, dtype::fp32, 4096, ok,
                                              ok_send, {}),
                    insane_figure);  // send times off a ring
    CHECK_THROWS_AS(assemble_collective_point(collective_op::alltoall, collective_algo::tree, 2, dtype::fp32, 4096, ok, {}, {}),
                    insane_figure);
    CHECK_THROWS_AS(assemble_collective_point(collective_op::allreduce, collective_algo::ring, 1, dtype::fp32, 4096,
                                              same(1, 3, 1e-3), same(1, 3, 0.5e-3), {}),
                    insane_figure);
    CHECK_THROWS_AS(assemble_collective_point(collective_op::allreduce, collective_algo::ring, 2, dtype::fp32, 0, ok, ok_send, {}),
                    insane_figure);
    CHECK_THROWS_AS(assemble_collective_point(collective_op::allreduce, collective_algo::ring, 2, dtype::fp32, 4098, ok, ok_send, {}),
                    insane_figure);
}

TEST_CASE("collective result: a ring whose links were not timed has no links and no slowest link") {
    // Every message came in one piece (a small size): the receivers timed nothing.
    const auto p = assemble_collective_point(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4096,
                                             same(4, 3, 50e-6), {}, {});
    CHECK(p.links.empty());
    CHECK_FALSE(p.slowest_link);
    CHECK_NOTHROW(check_sane(p));
    CHECK(p.time_s == Approx(50e-6));
    const json j = to_json(p);
    CHECK(j["links"].empty());
    CHECK(j["slowest_link"].is_null());
    CHECK(to_json(collective_point_from_json(j)) == j);
    // Some links but not all, or a slowest link without links, still does not hold together.
    auto partial = allreduce_4();
    partial.links.pop_back();
    CHECK_THROWS_AS(check_sane(partial), insane_figure);
    auto orphan = p;
    orphan.slowest_link = allreduce_4().links[0];
    CHECK_THROWS_AS(check_sane(orphan), insane_figure);
    // One rank's series missing while the others are there is refused, not read as "untimed".
    auto sends = same(4, 3, 20e-6);
    sends[2].clear();
    CHECK_THROWS_AS(assemble_collective_point(collective_op::allreduce, collective_algo::ring, 4, dtype::fp32, 4096,
                                              same(4, 3, 50e-6), sends, {}),
                    insane_figure);
}

TEST_CASE("collective result: check_sane refuses a point whose figures do not hold together") {
    const auto good = allreduce_4();
    CHECK_NOTHROW(check_sane(good));
    const auto refused = [&](auto change) {
        auto p = good;
        change(p);
        CHECK_THROWS_AS(check_sane(p), insane_figure);
    };
    refused([](collective_point& p) { p.busbw_gbyte_per_s = p.algbw_gbyte_per_s; });  // not × 1.5
    refused([](collective_point& p) { p.algbw_gbyte_per_s *= 2; });
    refused([](collective_point& p) { p.busbw_gbit_per_s = p.busbw_gbyte_per_s; });
    refused([](collective_point& p) { p.time_s = nan_v; });
    refused([](collective_point& p) { p.time_min_s = 2 * p.time_max_s; });
    refused([](collective_point& p) { p.count += 1; });
    refused([](collective_point& p) { p.iterations = 0; });
    refused([](collective_point& p) { p.rank_time_s.pop_back(); });
    refused([](collective_point& p) { p.rank_time_s[2] = 2 * p.time_s; });  // above the reported time
    refused([](collective_point& p) { p.slowest_rank = 9; });
    refused([](collective_point& p) { p.links[1].gbit_per_s *= 2; });
    refused([](collective_point& p) { p.links[1].bytes += 4; });
    refused([](collective_point& p) { p.slowest_link->from = 2; });
    refused([](collective_point& p) { p.links.pop_back(); });
    refused([](collective_point& p) { p.algo = collective_algo::tree; });  // tree links are not timed
    refused([](collective_point& p) { p.incast = incast_figures{}; });
    auto in = incast(5, 4);
    in.incast->fairness = 1;
    CHECK_THROWS_AS(check_sane(in), insane_figure);
}

TEST_CASE("collective result: JSON round trip of a whole run") {
    const auto r = sample_run();
    const json j = to_json(r);
    CHECK(j["schema"] == "meshperf.collective/1");
    CHECK(j["points"][0]["slowest_link"]["name"] == "rank 0 -> rank 1");
    CHECK(j["points"][0]["redop"] == "sum");
    CHECK(j["points"][1]["wrong"].is_null());
    CHECK(j["points"][1]["incast"]["receiver"] == 0);
    CHECK(j["error"].is_null());
    const auto back = collective_result_from_json(json::parse(j.dump()));
    CHECK(to_json(back) == j);
    CHECK(back.hosts[2].hostname == "node2");
    CHECK(back.spec.hosts == r.spec.hosts);
    REQUIRE(back.points.size() == 2);
    CHECK(back.points[0].slowest_link == r.points[0].slowest_link);
    CHECK(back.points[1].incast->fairness == r.points[1].incast->fairness);

    auto failed = r;
    failed.state = run_state::failed;
    failed.finished_at.clear();
    failed.error = "rank 2 (node2:7470) stopped answering at step 3 of allreduce 4000000";
    failed.points.pop_back();
    const auto jf = to_json(failed);
    CHECK(jf["finished_at"].is_null());
    CHECK(to_json(collective_result_from_json(jf)) == jf);
}

TEST_CASE("collective result: a foreign schema, a malformed field or an insane point is refused") {
    auto j = to_json(sample_run());
    auto foreign = j;
    foreign["schema"] = "meshperf.run/1";
    CHECK_THROWS_WITH_AS(collective_result_from_json(foreign),
                         "not a meshperf collective result (expected schema \"meshperf.collective/1\")", spec_error);
    foreign.erase("schema");
    CHECK_THROWS_AS(collective_result_from_json(foreign), spec_error);
    CHECK_THROWS_AS(collective_result_from_json(json::array()), spec_error);
    auto missing = j;
    missing["points"][0].erase("time_s");
    CHECK_THROWS_AS(collective_result_from_json(missing), spec_error);
    auto mistyped = j;
    mistyped["points"][0]["iterations"] = 2.5;
    CHECK_THROWS_AS(collective_result_from_json(mistyped), spec_error);
    auto insane = j;
    insane["points"][0]["busbw_gbyte_per_s"] = 40.0;  // algbw, not × 1.5
    CHECK_THROWS_AS(collective_result_from_json(insane), insane_figure);
}

namespace {

tcp_point_counters tcp_sent(std::uint64_t retransmits, std::uint64_t segments) {
    tcp_point_counters c;
    c.retransmits = retransmits;
    c.segments_sent = segments;
    c.rtt_us = {30, 120};
    c.cwnd = {10, 80};
    c.rtt_median_us = 45;
    return c;
}

}  // namespace

TEST_CASE("collective result: each rank's TCP counters round-trip, null where absent, left out when none") {
    auto p = allreduce_4();
    CHECK_FALSE(to_json(p).contains("rank_tcp_counters"));  // none: left out, as older results have it
    CHECK_FALSE(to_json(p)["slowest_link"].contains("retransmits"));
    CHECK(collective_point_from_json(to_json(p)).rank_tcp_counters.empty());

    // The slowest link of allreduce_4 is rank 0 -> rank 1 (the lowest on a tie); rank 2 is not read.
    p.rank_tcp_counters = {tcp_sent(40, 2000), tcp_sent(0, 1900), std::nullopt, tcp_sent(1, 1950)};
    attach_link_tcp_counts(p);
    CHECK(p.links[0].retransmits == std::optional<std::uint64_t>{40});
    CHECK(p.links[0].segments_sent == std::optional<std::uint64_t>{2000});
    CHECK_FALSE(p.links[2].retransmits);
    REQUIRE(p.slowest_link);
    CHECK(p.slowest_link->retransmits == std::optional<std::uint64_t>{40});
    check_sane(p);

    const json j = to_json(p);
    REQUIRE(j["rank_tcp_counters"].is_array());
    REQUIRE(j["rank_tcp_counters"].size() == 4);
    CHECK(j["rank_tcp_counters"][0]["retransmits"] == 40);
    CHECK(j["rank_tcp_counters"][0]["segments_sent"] == 2000);
    CHECK(j["rank_tcp_counters"][0]["retransmit_share"].get<double>() == Approx(0.02));
    CHECK(j["rank_tcp_counters"][2].is_null());
    CHECK(j["links"][0]["retransmits"] == 40);
    CHECK(j["links"][0]["segments_sent"] == 2000);
    CHECK_FALSE(j["links"][2].contains("retransmits"));
    CHECK(j["slowest_link"]["segments_sent"] == 2000);

    const auto back = collective_point_from_json(json::parse(j.dump()));
    CHECK(to_json(back) == j);
    REQUIRE(back.rank_tcp_counters.size() == 4);
    CHECK_FALSE(back.rank_tcp_counters[2]);
    CHECK(back.rank_tcp_counters[3]->segments_sent == 1950u);
    CHECK(back.rank_tcp_counters[0]->rtt_median_us == std::optional<std::uint64_t>{45});
    CHECK(back.slowest_link == p.slowest_link);

    auto explicit_null = j;
    explicit_null["rank_tcp_counters"] = nullptr;
    for (auto& l : explicit_null["links"]) l.erase("retransmits"), l.erase("segments_sent");
    explicit_null["slowest_link"].erase("retransmits");
    explicit_null["slowest_link"].erase("segments_sent");
    CHECK(collective_point_from_json(explicit_null).rank_tcp_counters.empty());
}

TEST_CASE("collective result: malformed or insane TCP counters of a rank are refused") {
    auto p = allreduce_4();
    p.rank_tcp_counters = {tcp_sent(4, 2000), tcp_sent(0, 1900), std::nullopt, tcp_sent(1, 1950)};
    attach_link_tcp_counts(p);
    const json j = to_json(p);

    auto short_array = j;
    short_array["rank_tcp_counters"].erase(3);
    CHECK_THROWS_WITH_AS(collective_point_from_json(short_array),
                         "collective point: 'rank_tcp_counters' must be an array with one entry per rank", spec_error);
    auto not_array = j;
    not_array["rank_tcp_counters"] = {{"retransmits", 1}};
    CHECK_THROWS_AS(collective_point_from_json(not_array), spec_error);
    auto missing_field = j;
    missing_field["rank_tcp_counters"][1].erase("segments_sent");
    CHECK_THROWS_WITH_AS(collective_point_from_json(missing_field),
                         "collective point: rank_tcp_counters[1]: TCP counters without \"segments_sent\"", spec_error);
    auto mistyped = j;
    mistyped["rank_tcp_counters"][0]["retransmits"] = "four";
    CHECK_THROWS_AS(collective_point_from_json(mistyped), spec_error);
    auto mistyped_link = j;
    mistyped_link["links"][1]["retransmits"] = -2;
    CHECK_THROWS_AS(collective_point_from_json(mistyped_link), spec_error);

    auto more_retransmitted = j;
    more_retransmitted["rank_tcp_counters"][3]["retransmits"] = 5000;
    CHECK_THROWS_AS(collective_point_from_json(more_retransmitted), insane_figure);
    auto disagreeing_link = j;
    disagreeing_link["links"][1]["retransmits"] = 7;
    CHECK_THROWS_AS(collective_point_from_json(disagreeing_link), insane_figure);
    auto half_link = j;
    half_link["links"][1].erase("segments_sent");
    CHECK_THROWS_AS(collective_point_from_json(half_link), insane_figure);

    auto wrong_count = p;
    wrong_count.rank_tcp_counters.pop_back();
    CHECK_THROWS_AS(check_sane(wrong_count), insane_figure);
}

TEST_CASE("collective result: CSV has nccl-tests' columns first, and one row per point") {
    const auto header = collective_csv_header();
    CHECK(header.rfind("size,count,type,redop,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s,wrong,", 0) == 0);
    CHECK(header == "size,count,type,redop,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s,wrong,"
                    "run_id,op,algo,ranks,iterations,time_min_us,time_p50_us,time_max_us,algbw_gbit_per_s,busbw_gbit_per_s,"
                    "rank_time_min_us,rank_time_max_us,rank_time_max_over_min,slowest_rank,slowest_link,slowest_link_gbit_per_s,"
                    "incast_total_gbit_per_s,incast_fairness");
    auto r = sample_run();
    CHECK(to_csv_row(r, r.points[0]) ==
          "4000000,1000000,fp32,sum,100,40,60,0,c-20261201-192000-a1b2c3,allreduce,ring,4,5,100,100,100,320,480,"
          "100,100,1,0,rank 0 -> rank 1,600,,");
    // Senders at 32, 32 and 16 Gbit/s: Jain's index 80² / (3 · 2304) = 0.925926; no link, not verified.
    CHECK(to_csv_row(r, r.points[1]) ==
          "4000000,1000000,fp32,none,2000,2,6,,c-20261201-192000-a1b2c3,incast,direct,4,3,2000,2000,2000,16,48,"
          "1000,2000,2,0,,,48,0.925926");
    r.id = "odd, \"id\"";
    for (const auto& p : r.points) CHECK(columns(to_csv_row(r, p)) == columns(header));
    CHECK(to_csv_row(r, r.points[0]).find(",\"odd, \"\"id\"\"\",") != std::string::npos);
}

}  // namespace collective_result_test
