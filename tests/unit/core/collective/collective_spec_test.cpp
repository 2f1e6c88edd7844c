#include "core/collective/schedule.hpp"
#include "core/collective/spec.hpp"
#include "core/error.hpp"
#include "core/collective/pipelined_schedule.hpp"
#include "core/sizes.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collective_spec_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using doctest::Contains;
using nlohmann::json;

namespace {

/// The rule the daemon and the CLI pass: the run spec's peer rule.
std::string normal(std::string_view h) { return meshperf::transport::parse_endpoint(h).to_string(); }
const endpoint_normalizer normalize = normal;

collective_spec valid_spec(unsigned ranks = 4) {
    collective_spec s;
    for (unsigned r = 0; r < ranks; ++r) s.hosts.push_back("10.0.0." + std::to_string(r + 1) + ":7470");
    s.sizes = {4096, 1 << 20};
    return s;
}

/// The spec_error message that validating `s` raises; empty when it is valid.
std::string problem(const collective_spec& s, const collective_limits& lim = {}) {
    try {
        validate(s, normalize, lim);
    } catch (const spec_error& e) {
        return e.what();
    }
    return {};
}

/// The spec_error message of collective_spec_from_json(j); fails when it accepts j.
std::string json_problem(const json& j, const collective_limits& lim = {}) {
    try {
        (void)collective_spec_from_json(j, normalize, lim);
    } catch (const spec_error& e) {
        return e.what();
    }
    FAIL("expected a spec_error for " << j.dump());
    return {};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

json minimal_json() { return json{{"hosts", {"node1", "node2:7471"}}}; }

void check_same(const collective_spec& a, const collective_spec& b) {
    CHECK(a.hosts == b.hosts);
    CHECK(a.coordinator == b.coordinator);
    CHECK(a.ops == b.ops);
    CHECK(a.algo == b.algo);
    CHECK(a.sizes == b.sizes);
    CHECK(a.transport == b.transport);
    CHECK(a.rdma_device == b.rdma_device);
    CHECK(a.rdma_port == b.rdma_port);
    CHECK(a.gid_index == b.gid_index);
    CHECK(a.memory == b.memory);
    CHECK(a.element == b.element);
    CHECK(a.verify == b.verify);
    CHECK(a.iterations == b.iterations);
    CHECK(a.duration_s == b.duration_s);
    CHECK(a.warmup_iterations == b.warmup_iterations);
    CHECK(a.predict == b.predict);
}

/// The most elements one rank sends or receives in a schedule: what collective_rank_bytes
/// says in bytes.
std::uint64_t busiest(const std::vector<rank_schedule>& plans) {
    std::uint64_t most = 0;
    for (const auto& plan : plans) {
        std::uint64_t sent = 0, received = 0;
        for (const auto& step : plan) {
            for (const auto& t : step.sends) sent += t.range.count;
            for (const auto& t : step.recvs) received += t.range.count;
        }
        most = std::max({most, sent, received});
    }
    return most;
}

/// The same for ring steps over a buffer of `elements`.
std::uint64_t busiest(const std::vector<std::vector<ring_step>>& plans, std::size_t elements) {
    const auto p = static_cast<unsigned>(plans.size());
    std::uint64_t most = 0;
    for (const auto& plan : plans) {
        std::uint64_t sent = 0, received = 0;
        for (const auto& step : plan) {
            sent += ring_chunk(elements, p, step.send_chunk).count;
            received += ring_chunk(elements, p, step.recv_chunk).count;
        }
        most = std::max({most, sent, received});
    }
    return most;
}

template <class Plan>
std::vector<Plan> every_rank(unsigned p, Plan (*steps)(unsigned, unsigned)) {
    std::vector<Plan> out;
    for (unsigned r = 0; r < p; ++r) out.push_back(steps(p, r));
    return out;
}

}  // namespace

TEST_SUITE("collective_spec") {

TEST_CASE("collective spec: defaults are filled from a JSON spec that gives only the hosts") {
    const auto s = collective_spec_from_json(minimal_json(), normalize);
    CHECK(s.hosts == std::vector<std::string>{"node1:7470", "node2:7471"});
    CHECK_FALSE(s.coordinator);
    CHECK(coordinator_of(s) == "node1:7470");
    CHECK(s.ops == std::vector<collective_op>{collective_op::allreduce});
    CHECK_FALSE(s.algo);
    CHECK(algo_for(s, collective_op::allreduce) == collective_algo::ring);
    CHECK(s.sizes == parse_size_list("1K..64M"));
    CHECK(s.transport == "tcp");
    CHECK(s.memory == "host");
    CHECK(s.element == dtype::fp32);
    CHECK_FALSE(s.verify);
    CHECK(s.iterations == default_collective_iterations);
    CHECK(default_collective_iterations == 20);
    CHECK(s.warmup_iterations == 5);
    CHECK_FALSE(s.duration_s);
    CHECK_FALSE(s.predict);
    CHECK_FALSE(s.model_file);
    CHECK(problem(valid_spec()).empty());
}

TEST_CASE("collective spec: each op without --algo runs its default algorithm") {
    auto s = valid_spec();
    s.ops = {collective_op::allreduce, collective_op::alltoall, collective_op::incast, collective_op::broadcast};
    CHECK(problem(s).empty());
    CHECK(algo_for(s, collective_op::allreduce) == collective_algo::ring);
    CHECK(algo_for(s, collective_op::alltoall) == collective_algo::direct);
    CHECK(algo_for(s, collective_op::incast) == collective_algo::direct);
    CHECK(algo_for(s, collective_op::broadcast) == collective_algo::ring);
    s.algo = collective_algo::tree;
    CHECK(algo_for(s, collective_op::allreduce) == collective_algo::tree);
}

TEST_CASE("collective spec: fewer than 2 hosts are refused") {
    auto s = valid_spec();
    s.hosts.clear();
    CHECK(problem(s) == "a collective needs at least 2 hosts and none is given: give every daemon that takes part as "
                        "HOST[:PORT], one per rank");
    s.hosts = {"node1"};
    CHECK(problem(s) == "a collective needs at least 2 hosts and only node1 is given: give every daemon that takes part as "
                        "HOST[:PORT], one per rank");
    CHECK(has(json_problem({{"hosts", json::array()}}), "at least 2 hosts"));
    s.hosts = {"node1", "node2"};
    CHECK(problem(s).empty());
}

TEST_CASE("collective spec: a daemon given twice is refused with both ranks") {
    auto s = valid_spec();
    s.hosts = {"10.0.0.1:7470", "10.0.0.2:7470", "10.0.0.3:7470", "10.0.0.2:7470"};
    CHECK(problem(s) == "hosts: 10.0.0.2:7470 is given twice (ranks 1 and 3): give each daemon once");
    // Compared as the endpoint rule writes them: the default port is the same daemon.
    s.hosts = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.2:7470"};
    CHECK(problem(s) == "hosts: 10.0.0.2:7470 is given twice (ranks 1 and 3, written '10.0.0.2' and '10.0.0.2:7470'): give "
                        "each daemon once");
    s.hosts = {"[::1]", "[::1]:7470"};
    CHECK(has(problem(s), "hosts: [::1]:7470 is given twice (ranks 0 and 1"));
    // Two daemons on one host, on two ports, are two ranks.
    s.hosts = {"10.0.0.1:7470", "10.0.0.1:7471"};
    CHECK(problem(s).empty());
    CHECK(has(json_problem({{"hosts", {"a", "b", "a:7470"}}}), "hosts: a:7470 is given twice (ranks 0 and 2"));
}

TEST_CASE("collective spec: a malformed host is refused naming its rank") {
    auto s = valid_spec();
    s.hosts[1] = "node2:0";
    CHECK(problem(s) == "hosts: rank 1: address 'node2:0' has a bad port '0' (use 1..65535)");
    s.hosts[1] = "";
    CHECK(has(problem(s), "hosts: rank 1: address '' has no host (use HOST[:PORT])"));
    s.hosts[1] = "[::1";
    CHECK(has(problem(s), "hosts: rank 1: address '[::1' has an unclosed '['"));
}

TEST_CASE("collective spec: more ranks than the limit are refused") {
    collective_limits lim;
    lim.max_ranks = 8;
    CHECK(problem(valid_spec(8), lim).empty());
    CHECK(problem(valid_spec(9), lim) ==
          "9 hosts are more than the 8 ranks a collective may have (limits.max_ranks): give at most 8 hosts");
    CHECK(collective_limits{}.max_ranks == 4096);
    collective_spec s;
    for (unsigned r = 0; r < 4097; ++r) s.hosts.push_back("node" + std::to_string(r));
    s.sizes = {1 << 20};
    CHECK(has(problem(s), "4097 hosts are more than the 4096 ranks"));
    s.hosts.pop_back();
    CHECK(problem(s).empty());
}

TEST_CASE("collective spec: the coordinator is one of the hosts") {
    auto s = valid_spec();
    s.coordinator = "10.0.0.9";
    CHECK(problem(s) == "coordinator 10.0.0.9:7470 is not one of the hosts: give one of them (the coordinator takes part as a "
                        "rank and runs the barrier), or leave it out for the first host, 10.0.0.1:7470");
    s.coordinator = "10.0.0.3";  // written without the port, still rank 2
    CHECK(problem(s).empty());
    s.coordinator = "10.0.0.3:x";
    CHECK(has(problem(s), "coordinator: address '10.0.0.3:x' has a bad port"));
    auto j = minimal_json();
    j["coordinator"] = "node2:7471";
    const auto read = collective_spec_from_json(j, normalize);
    CHECK(coordinator_of(read) == "node2:7471");
}

TEST_CASE("collective spec: ops must be given, once each, and runnable by the algorithm") {
    auto s = valid_spec();
    s.ops.clear();
    CHECK(problem(s) == "no ops: give at least one of allreduce, allgather, reduce-scatter, alltoall, broadcast, incast");
    s.ops = {collective_op::allreduce, collective_op::broadcast, collective_op::allreduce};
    CHECK(problem(s) == "ops: allreduce is given twice: give each op once");
    s.ops = {collective_op::allreduce, collective_op::alltoall};
    s.algo = collective_algo::tree;
    CHECK(problem(s) == "--algo tree cannot run alltoall: use direct (or leave out --algo: each op then runs its own default, "
                        "ring where it runs, else direct)");
    s.algo = collective_algo::direct;
    CHECK(has(problem(s), "--algo direct cannot run allreduce: use ring or tree"));
    s.algo.reset();
    CHECK(problem(s).empty());
    s.ops = {collective_op::allreduce, collective_op::broadcast};
    s.algo = collective_algo::tree;
    CHECK(problem(s).empty());

    CHECK(parse_collective_op_list("allreduce,all-gather,allreduce") ==
          std::vector<collective_op>{collective_op::allreduce, collective_op::allgather});
    CHECK_THROWS_WITH_AS(parse_collective_op_list("allreduce,,alltoall"), Contains("has an empty item"), spec_error);
    CHECK_THROWS_WITH_AS(parse_collective_op_list("allreduce,"), Contains("has an empty item"), spec_error);
    CHECK_THROWS_WITH_AS(parse_collective_op_list(",allreduce"), Contains("has an empty item"), spec_error);
    CHECK(parse_collective_op_list("incast") == std::vector<collective_op>{collective_op::incast});
    auto j = minimal_json();
    j["ops"] = "allreduce,allscatter";
    CHECK(has(json_problem(j), "unknown collective 'allscatter': use one of allreduce"));
    j["ops"] = json::array();
    CHECK(has(json_problem(j), "no ops"));
}

TEST_CASE("collective spec: sizes in range, ascending and unique") {
    auto s = valid_spec();
    s.sizes.clear();
    CHECK(problem(s) == "no sizes: give sizes such as 1K..64M or 4K,1M,16M");
    s.sizes = {0, 64};
    CHECK(problem(s) == "size 0 is out of range: sizes run from 1 B to 1 GiB");
    s.sizes = {64, (1ull << 30) + 4};
    CHECK(has(problem(s), "out of range"));
    s.sizes = {4096, 64};
    CHECK(problem(s) == "sizes must be ascending and unique");
    s.sizes = {64, 64};
    CHECK(problem(s) == "sizes must be ascending and unique");
    s.sizes = {4, 1ull << 30};
    CHECK(problem(s).empty());
}

TEST_CASE("collective spec: a size that is not whole elements is refused with the nearest valid sizes") {
    auto s = valid_spec();
    s.sizes = {1001};
    CHECK(problem(s) == "size 1001 B is not a whole number of fp32 elements (4 B each), as allreduce needs: use 1000 or 1004 "
                        "B, the nearest sizes below and above valid");
    s.element = dtype::bf16;
    CHECK(has(problem(s), "bf16 elements (2 B each), as allreduce needs: use 1000 or 1002 B"));
    s.element = dtype::fp32;
    s.sizes = {3};
    CHECK(has(problem(s), "use 4 B, the smallest size valid"));
    s.sizes = {1, 2, 3, 4};
    CHECK(has(problem(s), "size 1 B is not a whole number of fp32 elements (4 B each), as allreduce needs: use 4 B, the "
                          "smallest size valid (2 more sizes of the list cannot either)"));
    s.ops = {collective_op::broadcast};
    s.sizes = {1001};
    CHECK(has(problem(s), "as broadcast needs"));
    // Incast moves bytes and reduces nothing: any size, with or without verify.
    s.ops = {collective_op::incast};
    s.verify = true;
    s.element = dtype::bf16;
    CHECK(problem(s).empty());
}

TEST_CASE("collective spec: a size not divisible into p equal blocks of elements is refused clearly") {
    auto s = valid_spec(6);
    s.ops = {collective_op::allgather};
    s.sizes = {16 << 20};
    CHECK(problem(s) == "size 16777216 B (16 MiB) cannot be cut into 6 equal blocks of whole fp32 elements, as allgather "
                        "over 6 ranks needs (a size must be a multiple of 6 x 4 B = 24 B): use 16777200 or 16777224 B, the "
                        "nearest sizes below and above valid");
    s.sizes = {8};
    CHECK(has(problem(s), "use 24 B, the smallest size valid"));
    s.sizes = {1ull << 30};
    CHECK(has(problem(s), "use 1073741808 B, the nearest size below valid"));
    s.sizes = {24, 48, 16777200};
    CHECK(problem(s).empty());
    // With more ops the suggestion suits every one of them: all-reduce and all-to-all over 6.
    s.ops = {collective_op::allreduce, collective_op::alltoall};
    s.sizes = {1000};
    CHECK(has(problem(s), "as alltoall over 6 ranks needs (a size must be a multiple of 6 x 4 B = 24 B): use 984 or 1008 B, "
                          "the nearest sizes below and above valid for every op of the run"));
    s.ops = {collective_op::reduce_scatter};
    s.element = dtype::bf16;
    s.sizes = {1 << 10, 1 << 20};
    CHECK(has(problem(s), "size 1024 B (1 KiB) cannot be cut into 6 equal blocks of whole bf16 elements, as reduce-scatter "
                          "over 6 ranks needs (a size must be a multiple of 6 x 2 B = 12 B): use 1020 or 1032 B"));
    CHECK(has(problem(s), "(1 more size of the list cannot either)"));
}

TEST_CASE("collective spec: divisibility for p = 2..17, and every size it suggests is valid") {
    for (unsigned p = 2; p <= 17; ++p) {
        for (auto op : {collective_op::allgather, collective_op::reduce_scatter, collective_op::alltoall}) {
            for (auto d : {dtype::fp32, dtype::bf16, dtype::fp16}) {
                CAPTURE(p);
                CAPTURE(to_string(op));
                CAPTURE(to_string(d));
                const std::uint64_t e = dtype_bytes(d);
                CHECK(size_step(op, p, d) == p * e);
                auto s = valid_spec(p);
                s.ops = {op};
                s.element = d;
                s.sizes = {p * e, 1000 * p * e};
                CHECK(problem(s).empty());
                // A power of two splits into p blocks of elements only when p is one.
                s.sizes = {1 << 20};
                const bool power_of_two = (p & (p - 1)) == 0;
                CHECK(problem(s).empty() == power_of_two);
                // One element more than a valid size: refused, the neighbours suggested are valid.
                const auto valid = 1000 * p * e;
                s.sizes = {valid + e};
                const auto why = problem(s);
                CHECK(has(why, fmt::format("cannot be cut into {} equal blocks", p)));
                CHECK(has(why, fmt::format("use {} or {} B", valid, valid + p * e)));
                s.sizes = {valid + p * e};
                CHECK(problem(s).empty());
                // Whole elements suffice for all-reduce and broadcast, whatever p.
                s.ops = {collective_op::allreduce, collective_op::broadcast};
                s.sizes = {valid + e};
                CHECK(problem(s).empty());
            }
        }
    }
}

TEST_CASE("collective spec: size_step of a spec is the common step of its ops") {
    auto s = valid_spec(6);
    s.ops = {collective_op::incast};
    CHECK(size_step(s) == 1);
    s.ops = {collective_op::allreduce, collective_op::incast};
    CHECK(size_step(s) == 4);
    s.ops = {collective_op::allreduce, collective_op::allgather};
    CHECK(size_step(s) == 24);
    s.element = dtype::bf16;
    CHECK(size_step(s) == 12);
}

TEST_CASE("collective spec: iterations or duration, in range") {
    auto s = valid_spec();
    s.duration_s = 2.0;
    CHECK(problem(s) == "iterations and duration both fix a size's length: give one of them");
    s.iterations.reset();
    CHECK(problem(s).empty());
    s.duration_s.reset();
    CHECK(problem(s) == "nothing fixes a size's length: give iterations (nccl-tests' default is 20) or a duration");
    s.iterations = 0;
    CHECK(problem(s) == "iterations 0 is out of range: use 1..100000000");
    s.iterations = 100'000'001;
    CHECK(has(problem(s), "iterations 100000001 is out of range"));
    collective_limits lim;
    lim.run.max_iterations = 1000;
    s.iterations = 1001;
    CHECK(has(problem(s, lim), "use 1..1000"));
    s.iterations = 1000;
    CHECK(problem(s, lim).empty());
    s.warmup_iterations = 1001;
    CHECK(problem(s, lim) == "warm-up iterations 1001 is out of range: use 0..1000");
    s.warmup_iterations = 0;
    CHECK(problem(s, lim).empty());
    s = valid_spec();
    s.iterations.reset();
    for (double bad : {0.001, 61.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        s.duration_s = bad;
        CHECK(has(problem(s), "s is out of range: use 0.01..60 s"));
    }
    s.duration_s = 60.0;
    CHECK(problem(s).empty());
    // In JSON a duration without iterations drops the default count.
    auto j = minimal_json();
    j["duration_s"] = 1.5;
    const auto timed = collective_spec_from_json(j, normalize);
    CHECK_FALSE(timed.iterations);
    CHECK(timed.duration_s == 1.5);
    j["iterations"] = 10;
    CHECK(has(json_problem(j), "give one of them"));
    j["duration_s"] = nullptr;
    CHECK(collective_spec_from_json(j, normalize).iterations == 10);
}

TEST_CASE("collective spec: per-rank bytes per iteration match the schedules for p = 2..17") {
    for (unsigned p = 2; p <= 17; ++p) {
        CAPTURE(p);
        for (std::size_t n : {std::size_t{p} * 7, std::size_t{p} * 7 + 1, std::size_t{p} * 7 + p - 1, std::size_t{p} - 1,
                              std::size_t{1}}) {
            CAPTURE(n);
            const auto bytes = [&](collective_op op, collective_algo a) {
                return collective_rank_bytes(op, a, p, dtype::fp32, n * 4);
            };
            CHECK(bytes(collective_op::allreduce, collective_algo::ring) ==
                  4 * busiest(every_rank<std::vector<ring_step>>(p, ring_allreduce_steps), n));
            std::vector<rank_schedule> tree_ar, tree_bc, chain;
            for (unsigned r = 0; r < p; ++r) {
                tree_ar.push_back(tree_allreduce_steps(p, r, n, 3));
                tree_bc.push_back(tree_broadcast_steps(p, r, 0, n, 3));
                chain.push_back(chain_broadcast_steps(p, r, 0, n, 3));
            }
            CHECK(bytes(collective_op::allreduce, collective_algo::tree) == 4 * busiest(tree_ar));
            CHECK(bytes(collective_op::broadcast, collective_algo::tree) == 4 * busiest(tree_bc));
            CHECK(bytes(collective_op::broadcast, collective_algo::ring) == 4 * busiest(chain));
            CHECK(bytes(collective_op::incast, collective_algo::direct) == 4 * n * (p - 1));
        }
        // Block ops on sizes valid for them: p blocks of 5 elements.
        const std::size_t n = std::size_t{p} * 5;
        const auto bytes = [&](collective_op op, collective_algo a) { return collective_rank_bytes(op, a, p, dtype::bf16, n * 2); };
        CHECK(bytes(collective_op::allgather, collective_algo::ring) ==
              2 * busiest(every_rank<std::vector<ring_step>>(p, ring_allgather_steps), n));
        CHECK(bytes(collective_op::reduce_scatter, collective_algo::ring) ==
              2 * busiest(every_rank<std::vector<ring_step>>(p, ring_reduce_scatter_steps), n));
        std::vector<rank_schedule> ag, a2a;
        for (unsigned r = 0; r < p; ++r) {
            ag.push_back(direct_allgather_steps(p, r, n));
            a2a.push_back(direct_alltoall_steps(p, r, n));
        }
        CHECK(bytes(collective_op::allgather, collective_algo::direct) == 2 * busiest(ag));
        CHECK(bytes(collective_op::alltoall, collective_algo::direct) == 2 * busiest(a2a));
        CHECK(bytes(collective_op::alltoall, collective_algo::direct) == 2 * n * (p - 1) / p);
    }
    CHECK(collective_rank_bytes(collective_op::allreduce, collective_algo::ring, 8, dtype::fp32, 1 << 20) == 2 * 7 * (1 << 17));
    CHECK_THROWS_AS((void)collective_rank_bytes(collective_op::allreduce, collective_algo::ring, 1, dtype::fp32, 64), spec_error);
    CHECK_THROWS_AS((void)collective_rank_bytes(collective_op::alltoall, collective_algo::ring, 4, dtype::fp32, 64), spec_error);
}

TEST_CASE("collective spec: bytes per size beyond the limit are refused with the largest size that fits") {
    auto s = valid_spec(4);
    s.sizes = {4096, 64 << 20};
    collective_limits lim;
    lim.run.max_bytes_per_point = 1ull << 30;
    // 25 iterations (5 warm-up) of 2·3/4 × 64 MiB = 96 MiB each through every rank.
    CHECK(collective_size_bytes(s, collective_op::allreduce, 64 << 20) == 25ull * (96 << 20));
    const auto why = problem(s, lim);
    CHECK(has(why, "allreduce (ring) of 64 MiB over 4 ranks would move 2.34 GiB through the busiest rank per direction (25 "
                   "iterations, 5 of them warm-up, x 96 MiB), more than 1 GiB allowed per size (limits.max_bytes_per_point "
                   "of this daemon is 1 GiB; an operator may raise it in [limits] max_bytes_per_point): use sizes up to "));
    CHECK(has(why, ", the largest that fits, or at most 5 iterations, or give --duration, which stops at the limit"));
    // The size it names fits, and the next valid one does not.
    const auto at = why.find("use sizes up to ") + 16;
    const std::uint64_t fit = std::stoull(why.substr(at));
    CHECK(fit % 4 == 0);
    s.sizes = {fit};
    CHECK(problem(s, lim).empty());
    s.sizes = {fit + 4};
    CHECK(has(problem(s, lim), "would move"));
    // A timed size must fit its warm-up and one iteration.
    s.iterations.reset();
    s.duration_s = 1.0;
    s.sizes = {1ull << 30};
    CHECK(has(problem(s, lim), "allreduce (ring) of 1 GiB over 4 ranks moves 9 GiB through the busiest rank per direction in "
                               "its 5 warm-up iterations and one measured one, more than 1 GiB allowed per size"));
    s.sizes = {64 << 20};
    CHECK(problem(s, lim).empty());
    // Incast counts what the receiver takes in: p−1 senders.
    s = valid_spec(5);
    s.ops = {collective_op::incast};
    s.sizes = {16 << 20};
    CHECK(collective_size_bytes(s, collective_op::incast, 16 << 20) == 25ull * 4 * (16 << 20));
    lim.run.max_bytes_per_point = 25ull * 4 * (16 << 20);
    CHECK(problem(s, lim).empty());
    s.sizes = {(16 << 20) + 1};
    CHECK(has(problem(s, lim), "use sizes up to 16777216 B (16 MiB), the largest that fits"));
    s.iterations.reset();
    CHECK(collective_size_bytes(s, collective_op::incast, 1) == 0);
}

TEST_CASE("collective spec: memory domains as the run spec has them") {
    auto s = valid_spec();
    s.memory = "cuda:0";
    CHECK(problem(s).empty());
    s.transport = "rdma";
    s.verify = true;
    CHECK(problem(s).empty());
    for (const char* bad : {"gpu0", "cuda:", "cuda:x", "cuda:12345", ""}) {
        s.memory = bad;
        CHECK(problem(s) == fmt::format("memory '{}' is not a memory domain: use host or cuda:N (N a GPU index)", bad));
    }
}

TEST_CASE("collective spec: RDMA device, port and GID index, with --transport rdma only") {
    auto j = minimal_json();
    j["transport"] = "rdma";
    j["rdma_device"] = "rxe0";
    j["rdma_port"] = 1;
    j["gid_index"] = 1;
    const auto s = collective_spec_from_json(j, normalize);
    CHECK(s.rdma_device == "rxe0");
    CHECK(s.rdma_port == 1);
    CHECK(s.gid_index == 1);
    const auto back = to_json(s);
    CHECK(back["rdma_device"] == "rxe0");
    CHECK(back["gid_index"] == 1);
    CHECK(collective_spec_from_json(back, normalize).gid_index == 1);
    for (auto [key, value, message] : {std::tuple<const char*, json, const char*>{"rdma_port", 0, "RDMA port 0 is out of range: use 1..255"},
                                       {"rdma_port", 256, "RDMA port 256 is out of range: use 1..255"},
                                       {"rdma_port", 1u << 20, "RDMA port 0 is out of range"},
                                       {"gid_index", 5000, "GID index 1024 is out of range: use 0..1023"},
                                       {"rdma_device", "mlx5 0", "is not a device name"}}) {
        auto bad = j;
        bad[key] = value;
        CHECK(has(json_problem(bad), message));
    }
    auto tcp = j;
    tcp["transport"] = "tcp";
    CHECK(has(json_problem(tcp), "apply to transport rdma only"));
    CHECK_FALSE(to_json(collective_spec_from_json(minimal_json(), normalize)).contains("rdma_device"));  // TCP specs stay as they were
}

TEST_CASE("collective spec: model_file stays on the client and needs predict") {
    auto s = valid_spec();
    s.model_file = "matrix.json";
    CHECK(problem(s) == "--model matrix.json is only read for --predict: add --predict, or leave out --model");
    s.predict = true;
    CHECK(problem(s).empty());
    CHECK_FALSE(to_json(s).contains("model_file"));
    s.model_file = "";
    CHECK(problem(s) == "--model has an empty path: give the JSON file of a matrix run");
    auto j = minimal_json();
    j["model_file"] = "matrix.json";
    CHECK(json_problem(j) == "field 'model_file' is not part of a collective spec: the client reads --model and predicts "
                             "itself; send the run without it");
}

TEST_CASE("collective spec: JSON round trip") {
    std::vector<collective_spec> specs;
    specs.push_back(valid_spec(2));
    auto s = valid_spec(6);
    s.coordinator = "10.0.0.3:7470";
    s.ops = {collective_op::allgather, collective_op::alltoall, collective_op::incast};
    s.algo = collective_algo::direct;
    s.sizes = {24, 4800, 24 << 20};
    s.transport = "rdma";
    s.rdma_device = "mlx5_2";
    s.rdma_port = 2;
    s.gid_index = 3;
    s.memory = "cuda:3";
    s.element = dtype::bf16;
    s.verify = true;
    s.iterations = 100;
    s.warmup_iterations = 0;
    s.predict = true;
    specs.push_back(s);
    s = valid_spec(17);
    s.ops = {collective_op::broadcast, collective_op::allreduce};
    s.algo = collective_algo::tree;
    s.iterations.reset();
    s.duration_s = 0.25;
    s.element = dtype::fp16;
    s.sizes = {2, 1 << 30};
    specs.push_back(s);
    s = valid_spec(3);
    s.hosts = {"[fe80::1]:7470", "node-b.example.com:9000", "10.1.2.3:7470"};
    s.ops = {collective_op::reduce_scatter};
    s.sizes = {12, 1200};
    specs.push_back(s);
    for (const auto& spec : specs) {
        CAPTURE(to_json(spec).dump());
        REQUIRE(problem(spec).empty());
        const auto j = to_json(spec);
        const auto back = collective_spec_from_json(json::parse(j.dump()), normalize);
        check_same(spec, back);
        CHECK(to_json(back) == j);
    }
    // Strings where a person writes lists.
    auto j = minimal_json();
    j["ops"] = "allreduce,reduce_scatter";
    j["sizes"] = "4K..16K";
    j["dtype"] = "bfloat16";
    const auto read = collective_spec_from_json(j, normalize);
    CHECK(read.ops == std::vector<collective_op>{collective_op::allreduce, collective_op::reduce_scatter});
    CHECK(read.sizes == std::vector<std::uint64_t>{4096, 8192, 16384});
    CHECK(read.element == dtype::bf16);
    CHECK(to_json(read)["dtype"] == "bf16");
}

TEST_CASE("collective spec: unknown fields and wrong types are refused") {
    CHECK(json_problem(json::array()) == "a collective spec must be a JSON object, not array");
    CHECK(json_problem(json::object()) ==
          "collective spec has no 'hosts': give the daemons as [\"host:port\", ...], one per rank");
    auto with = [](const char* key, json value) {
        auto j = minimal_json();
        j[key] = std::move(value);
        return j;
    };
    CHECK(json_problem(with("peer", "node3")) == "unknown field 'peer' in collective spec");
    CHECK(json_problem(with("hosts", "node1,node2")) ==
          "field 'hosts' must be an array of \"HOST[:PORT]\" strings, one per rank, not string");
    CHECK(json_problem(with("hosts", {"node1", 7})) == "field 'hosts[1]' must be a string, not number");
    CHECK(json_problem(with("coordinator", 1)) == "field 'coordinator' must be a string, not number");
    CHECK(json_problem(with("ops", 3)) == "field 'ops' must be an array of op names or a string like \"allreduce,allgather\"");
    CHECK(json_problem(with("ops", {"allreduce", true})) == "field 'ops[]' must be a string, not boolean");
    CHECK(has(json_problem(with("algo", "butterfly")), "unknown algorithm 'butterfly': use one of ring, tree, direct"));
    CHECK(has(json_problem(with("transport", "udp")), "unknown transport 'udp': use one of tcp, rdma"));
    CHECK(has(json_problem(with("dtype", "int8")), "unknown dtype \"int8\"; use bf16, fp16 or fp32"));
    CHECK(json_problem(with("memory", 0)) == "field 'memory' must be a string, not number");
    CHECK(json_problem(with("verify", "yes")) == "field 'verify' must be true or false, not string");
    CHECK(json_problem(with("predict", 1)) == "field 'predict' must be true or false, not number");
    CHECK(has(json_problem(with("iterations", 2.5)), "'iterations' must be an integer in 0.."));
    CHECK(has(json_problem(with("iterations", -1)), "'iterations' must be an integer"));
    CHECK(has(json_problem(with("iterations", "20")), "'iterations' must be an integer"));
    CHECK(has(json_problem(with("warmup_iterations", 1e300)), "'warmup_iterations' must be an integer"));
    CHECK(json_problem(with("duration_s", "1")) == "field 'duration_s' must be a number, not string");
    CHECK(json_problem(with("sizes", true)) == "field 'sizes' must be an array of byte counts or a string like \"1K..64M\"");
    CHECK(has(json_problem(with("sizes", {4096, 1024})), "field 'sizes' must list sizes in ascending order without repeats"));
    CHECK(has(json_problem(with("sizes", {1024, 2.5})), "'sizes[]' must be an integer"));
}

}  // TEST_SUITE

}  // namespace collective_spec_test
