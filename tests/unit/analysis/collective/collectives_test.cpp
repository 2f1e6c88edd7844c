#include "analysis/collective/predictions.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace collectives_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using namespace meshperf::analysis;

namespace {

// 5 µs, 10 GB/s (80 Gbit/s)
const link_model link5 = link_model::from_us_gbit(5, 80);

topology nodes(unsigned p, unsigned g = 1) {
    topology t;
    t.nodes = p;
    t.gpus_per_node = g;
    return t;
}

double us(const prediction& p) { return p.time_s * 1e6; }

}  // namespace

TEST_SUITE("collectives") {

TEST_CASE("link model units") {
    CHECK(link5.alpha_s == doctest::Approx(5e-6));
    CHECK(link5.beta_bytes_per_s == doctest::Approx(1e10));
}

TEST_CASE("hand-computed: 4 nodes, 1 MB, alpha 5 us, beta 10 GB/s") {
    const auto t = nodes(4);
    const std::uint64_t s = 1'000'000;  // S/β = 100 µs
    const auto ar_ring = predict(collective_op::allreduce, model_algo::ring, s, t, link5);
    CHECK(us(ar_ring) == doctest::Approx(2 * 3 * 5 + 2 * 0.75 * 100));  // 180 µs
    CHECK(ar_ring.latency_s * 1e6 == doctest::Approx(30));
    CHECK(ar_ring.bandwidth_s * 1e6 == doctest::Approx(150));
    CHECK(ar_ring.algbw_gbit_per_s == doctest::Approx(8e6 / 180e-6 / 1e9));
    CHECK(ar_ring.busbw_gbit_per_s == doctest::Approx(ar_ring.algbw_gbit_per_s * 1.5));
    CHECK(ar_ring.ranks == 4);
    CHECK(ar_ring.intra_modelled);
    CHECK(ar_ring.intra_bandwidth_s == 0);

    CHECK(us(predict(collective_op::allreduce, model_algo::tree, s, t, link5)) == doctest::Approx(2 * 2 * 5 + 2 * 100));
    const auto ag = predict(collective_op::allgather, model_algo::ring, s, t, link5);
    CHECK(us(ag) == doctest::Approx(3 * 5 + 0.75 * 100));  // 90 µs
    CHECK(ag.busbw_gbit_per_s == doctest::Approx(ag.algbw_gbit_per_s * 0.75));
    CHECK(us(predict(collective_op::allgather, model_algo::recursive_doubling, s, t, link5)) == doctest::Approx(2 * 5 + 75));
    CHECK(us(predict(collective_op::reduce_scatter, model_algo::ring, s, t, link5)) == doctest::Approx(90));
    CHECK(us(predict(collective_op::reduce_scatter, model_algo::recursive_halving, s, t, link5)) == doctest::Approx(85));
    const auto a2a = predict(collective_op::alltoall, model_algo::pairwise, s, t, link5);
    CHECK(us(a2a) == doctest::Approx(3 * 5 + 0.75 * 100));
    CHECK(a2a.busbw_gbit_per_s == doctest::Approx(a2a.algbw_gbit_per_s * 0.75));
    const auto bc = predict(collective_op::broadcast, model_algo::ring, s, t, link5);
    CHECK(us(bc) == doctest::Approx(3 * 5 + 100));
    CHECK(bc.busbw_gbit_per_s == doctest::Approx(bc.algbw_gbit_per_s));
}

TEST_CASE("bus bandwidth factors as nccl-tests") {
    CHECK(bus_factor(collective_op::allreduce, 8) == doctest::Approx(2.0 * 7 / 8));
    CHECK(bus_factor(collective_op::allgather, 8) == doctest::Approx(7.0 / 8));
    CHECK(bus_factor(collective_op::reduce_scatter, 8) == doctest::Approx(7.0 / 8));
    CHECK(bus_factor(collective_op::alltoall, 8) == doctest::Approx(7.0 / 8));
    CHECK(bus_factor(collective_op::broadcast, 8) == 1.0);
    CHECK(bus_factor(collective_op::allreduce, 2) == 1.0);
}

TEST_CASE("p = 2: ring and tree all-reduce agree; factors are 1 and 1/2") {
    const auto t = nodes(2);
    const std::uint64_t s = 1 << 20;
    const double sb = s / 1e10;
    const auto ring = predict(collective_op::allreduce, model_algo::ring, s, t, link5);
    const auto tree = predict(collective_op::allreduce, model_algo::tree, s, t, link5);
    CHECK(ring.time_s == doctest::Approx(2 * 5e-6 + sb));
    CHECK(tree.time_s == doctest::Approx(ring.time_s));
    CHECK(ring.busbw_gbit_per_s == doctest::Approx(ring.algbw_gbit_per_s));
    CHECK(predict(collective_op::allgather, model_algo::ring, s, t, link5).time_s == doctest::Approx(5e-6 + sb / 2));
    CHECK(predict(collective_op::allgather, model_algo::recursive_doubling, s, t, link5).time_s ==
          doctest::Approx(5e-6 + sb / 2));
}

TEST_CASE("S -> 0 leaves the latency term") {
    const auto t = nodes(16);
    const double a = 5e-6;
    struct want {
        collective_op c;
        model_algo al;
        double alphas;
    };
    for (auto w : {want{collective_op::allreduce, model_algo::ring, 2 * 15.0}, want{collective_op::allreduce, model_algo::tree, 2 * 4.0},
                   want{collective_op::allgather, model_algo::ring, 15}, want{collective_op::allgather, model_algo::recursive_doubling, 4},
                   want{collective_op::reduce_scatter, model_algo::ring, 15},
                   want{collective_op::reduce_scatter, model_algo::recursive_halving, 4},
                   want{collective_op::alltoall, model_algo::pairwise, 15}, want{collective_op::broadcast, model_algo::ring, 15}}) {
        CAPTURE(model_name(w.c));
        CAPTURE(to_string(w.al));
        const auto p = predict(w.c, w.al, 0, t, link5);
        CHECK(p.time_s == doctest::Approx(w.alphas * a));
        CHECK(p.bandwidth_s == 0);
        CHECK(p.algbw_gbit_per_s == 0);
        CHECK(p.busbw_gbit_per_s == 0);
    }
}

TEST_CASE("S -> infinity leaves the bandwidth term; ring busbw approaches the link rate") {
    const auto t = nodes(16);
    const std::uint64_t s = 1ull << 50;
    const double sb = static_cast<double>(s) / 1e10;
    CHECK(predict(collective_op::allreduce, model_algo::ring, s, t, link5).time_s / sb == doctest::Approx(2 * 15.0 / 16));
    CHECK(predict(collective_op::allreduce, model_algo::tree, s, t, link5).time_s / sb == doctest::Approx(2.0));
    CHECK(predict(collective_op::allgather, model_algo::ring, s, t, link5).time_s / sb == doctest::Approx(15.0 / 16));
    CHECK(predict(collective_op::broadcast, model_algo::ring, s, t, link5).time_s / sb == doctest::Approx(1.0));
    for (const auto& ca : {std::pair{collective_op::allreduce, model_algo::ring}, std::pair{collective_op::allgather, model_algo::ring},
                           std::pair{collective_op::reduce_scatter, model_algo::ring},
                           std::pair{collective_op::alltoall, model_algo::pairwise},
                           std::pair{collective_op::broadcast, model_algo::ring}}) {
        // Not a structured binding: clang < 16 cannot capture one in CAPTURE's lambda.
        const auto c = ca.first;
        const auto a = ca.second;
        CAPTURE(model_name(c));
        CHECK(predict(c, a, s, t, link5).busbw_gbit_per_s == doctest::Approx(80.0).epsilon(1e-6));
    }
}

TEST_CASE("hierarchical ring: one ring over all ranks, NICs share the node's data") {
    const std::uint64_t s = 80'000'000;  // S/β = 8 ms
    auto t = nodes(2, 8);
    const double v = 2 * 15.0 / 16 * s;  // bytes each rank sends in a ring all-reduce
    const auto free_intra = predict(collective_op::allreduce, model_algo::ring, s, t, link5);
    CHECK(free_intra.latency_s == doctest::Approx(2 * 15 * 5e-6));  // 2(n−1) steps
    CHECK(free_intra.bandwidth_s == doctest::Approx(v / 8 / 1e10));  // V over 8 NICs
    CHECK(free_intra.intra_bandwidth_s == 0);
    CHECK(free_intra.time_s == doctest::Approx(free_intra.latency_s + free_intra.bandwidth_s));
    CHECK_FALSE(free_intra.intra_modelled);
    CHECK(free_intra.ranks == 16);
    CHECK(free_intra.bottleneck() == "inter-node");
    CHECK(free_intra.busbw_gbit_per_s == doctest::Approx(free_intra.algbw_gbit_per_s * 2 * 15.0 / 16));

    t.intra = link_model::from_us_gbit(1, 800);  // 1 µs, 100 GB/s: faster than 8 NICs' share
    const auto nvlink = predict(collective_op::allreduce, model_algo::ring, s, t, link5);
    CHECK(nvlink.intra_modelled);
    CHECK(nvlink.intra_bandwidth_s == doctest::Approx(7.0 / 8 * v / 1e11));
    CHECK(nvlink.time_s == doctest::Approx(free_intra.time_s));  // overlapped, not the bottleneck
    CHECK(nvlink.bottleneck() == "inter-node");

    t.intra = link_model::from_us_gbit(1, 80);  // a slow intra-node link becomes the bottleneck
    const auto slow = predict(collective_op::allreduce, model_algo::ring, s, t, link5);
    CHECK(slow.bottleneck() == "intra-node");
    CHECK(slow.bandwidth_s == doctest::Approx(7.0 / 8 * v / 1e10));

    t.intra = link_model::from_us_gbit(1, 800);
    t.nics_per_node = 1;  // one NIC for 8 GPUs: the node's whole volume crosses it
    CHECK(predict(collective_op::allreduce, model_algo::ring, s, t, link5).bandwidth_s == doctest::Approx(v / 1e10));

    // busbw of a large all-reduce approaches G × the NIC rate, as nccl-tests shows on
    // rail-optimised clusters
    const auto big = predict(collective_op::allreduce, model_algo::ring, 1ull << 50, nodes(64, 8), link5);
    CHECK(big.busbw_gbit_per_s == doctest::Approx(8 * 80.0).epsilon(1e-6));
}

TEST_CASE("hierarchical tree, all-to-all, recursive doubling") {
    const std::uint64_t s = 80'000'000;
    auto t = nodes(4, 8);
    t.intra = link_model::from_us_gbit(1, 800);
    const auto tree = predict(collective_op::allreduce, model_algo::tree, s, t, link5);
    CHECK(tree.latency_s == doctest::Approx(2 * (2 * 5e-6 + 7 * 1e-6)));  // tree up/down, chain of 8
    CHECK(tree.inter_bandwidth_s == doctest::Approx(2 * 8e-3 / 8));
    CHECK(tree.intra_bandwidth_s == doctest::Approx(2 * 7.0 / 8 * s / 1e11));
    CHECK(tree.time_s == doctest::Approx(34e-6 + 2e-3));

    const auto rd = predict(collective_op::allgather, model_algo::recursive_doubling, s, t, link5);
    CHECK(rd.latency_s == doctest::Approx(2 * 5e-6 + 7 * 1e-6));
    CHECK(rd.inter_bandwidth_s == doctest::Approx(0.75 * 8e-3 / 8));
    CHECK(rd.intra_bandwidth_s == doctest::Approx(7.0 / 8 * s / 1e11));

    const auto a2a = predict(collective_op::alltoall, model_algo::pairwise, s, nodes(2, 4), link5);
    CHECK(a2a.latency_s == doctest::Approx(7 * 5e-6));
    CHECK(a2a.bandwidth_s == doctest::Approx(0.5 * 8e-3));  // half of S leaves, 4 GPUs on 4 NICs
}

TEST_CASE("hierarchical with G = 1 is the flat formula") {
    auto t = nodes(8, 1);
    t.intra = link_model::from_us_gbit(1, 800);
    const auto p = predict(collective_op::allreduce, model_algo::ring, 1 << 20, t, link5);
    CHECK(p.time_s == doctest::Approx(2 * 7 * 5e-6 + 2 * 7.0 / 8 * (1 << 20) / 1e10));
    CHECK(p.intra_bandwidth_s == 0);
}

TEST_CASE("a single node needs the intra-node link") {
    auto t = nodes(1, 8);
    CHECK_THROWS_WITH_AS(predict(collective_op::allreduce, model_algo::ring, 1 << 20, t, link5),
                         doctest::Contains("intra-node link"), spec_error);
    t.intra = link_model::from_us_gbit(2, 800);
    const auto p = predict(collective_op::allreduce, model_algo::ring, 1 << 20, t, link5);
    CHECK(p.time_s == doctest::Approx(2 * 7 * 2e-6 + 2 * 7.0 / 8 * (1 << 20) / 1e11));
}

TEST_CASE("invalid input is refused with a message") {
    CHECK_THROWS_WITH_AS(predict(collective_op::alltoall, model_algo::ring, 1, nodes(4), link5),
                         doctest::Contains("use pairwise"), spec_error);
    CHECK_THROWS_AS(predict(collective_op::allgather, model_algo::tree, 1, nodes(4), link5), spec_error);
    CHECK_THROWS_AS(predict(collective_op::broadcast, model_algo::tree, 1, nodes(4), link5), spec_error);
    CHECK_THROWS_AS(predict(collective_op::allreduce, model_algo::ring, 1, nodes(0), link5), spec_error);
    CHECK_THROWS_AS(predict(collective_op::allreduce, model_algo::ring, 1, nodes(1), link5), spec_error);
    auto t = nodes(2, 2);
    t.nics_per_node = 4;
    CHECK_THROWS_AS(predict(collective_op::allreduce, model_algo::ring, 1, t, link5), spec_error);
    CHECK_THROWS_AS(predict(collective_op::allreduce, model_algo::ring, 1, nodes(2), link_model{-1, 1e9}), spec_error);
    CHECK_THROWS_AS(predict(collective_op::allreduce, model_algo::ring, 1, nodes(2), link_model{1e-6, 0}), spec_error);
    CHECK_THROWS_AS(parse_collective("allsum"), spec_error);
    CHECK_THROWS_AS(parse_algorithm("star"), spec_error);
    CHECK_THROWS_WITH_AS(parse_dtype("int8"), doctest::Contains("bf16, fp16 or fp32"), spec_error);
}

TEST_CASE("names parse and print") {
    CHECK(parse_collective("allreduce") == collective_op::allreduce);
    CHECK(parse_collective("All-Gather") == collective_op::allgather);
    CHECK(parse_collective("reduce_scatter") == collective_op::reduce_scatter);
    CHECK(parse_collective("alltoall") == collective_op::alltoall);
    CHECK(parse_algorithm("recursive-doubling") == model_algo::recursive_doubling);
    CHECK(model_name(collective_op::alltoall) == "all_to_all");
    CHECK(model_name(collective_op::incast).empty());
    CHECK_THROWS_WITH_AS(parse_collective("incast"), doctest::Contains("all_to_all or broadcast"), spec_error);
    CHECK(parse_dtype("bfloat16") == dtype::bf16);
    CHECK(dtype_bytes(dtype::bf16) == 2);
    CHECK(dtype_bytes(dtype::fp16) == 2);
    CHECK(dtype_bytes(dtype::fp32) == 4);
    CHECK(algorithms_for(collective_op::allreduce).front() == model_algo::ring);
    CHECK(predict_all(1 << 20, nodes(4), link5).size() == 8);
}

TEST_CASE("a fitted model: the segment follows the message size of a step") {
    model_fit m;
    m.line = {1e-6, std::nullopt, 1e9};
    piecewise_fit pw;
    pw.below = {1e-6, std::nullopt, 1e9};
    pw.above = {10e-6, std::nullopt, 10e9};
    pw.break_after_bytes = 64 << 10;
    pw.break_before_bytes = 128 << 10;
    m.piecewise = pw;
    const auto t = nodes(4);
    // ring steps of 1 MiB / 4 = 256 KiB: upper segment
    CHECK(step_message_bytes(collective_op::allreduce, model_algo::ring, 1 << 20, t) == doctest::Approx(256 << 10));
    CHECK(step_message_bytes(collective_op::allreduce, model_algo::tree, 1 << 20, t) == doctest::Approx(512 << 10));
    const auto big = predict(collective_op::allreduce, model_algo::ring, 1 << 20, t, m);
    CHECK(big.time_s == doctest::Approx(6 * 10e-6 + 1.5 * (1 << 20) / 10e9));
    // ring steps of 64 KiB / 4 = 16 KiB: lower segment
    const auto small = predict(collective_op::allreduce, model_algo::ring, 64 << 10, t, m);
    CHECK(small.time_s == doctest::Approx(6 * 1e-6 + 1.5 * (64 << 10) / 1e9));
    CHECK(predict_all(1 << 20, t, m).size() == 8);
}

TEST_CASE("data-parallel step: buckets, time, efficiency") {
    dp_step_spec spec;
    spec.params = 1'000'000'000;  // 2 GB of bf16 gradients
    spec.algo = model_algo::ring;
    spec.compute_s = 0.5;
    const auto t = nodes(8);
    const auto plan = plan_dp_step(spec, t, link5);
    CHECK(plan.gradient_bytes == 2'000'000'000);
    CHECK(plan.bucket_bytes == 25ull << 20);
    CHECK(plan.buckets == 77);  // ceil(2e9 / 26214400)
    CHECK(plan.last_bucket_bytes == 2'000'000'000ull - 76 * (25ull << 20));
    const auto one = [&](double b) { return 2 * 7 * 5e-6 + 2 * 7.0 / 8 * b / 1e10; };
    CHECK(plan.bucket.time_s == doctest::Approx(one(25 << 20)));
    CHECK(plan.last_bucket.time_s == doctest::Approx(one(plan.last_bucket_bytes)));
    CHECK(plan.comm_s == doctest::Approx(76 * one(25 << 20) + one(plan.last_bucket_bytes)));
    CHECK(plan.bandwidth_bound_s == doctest::Approx(2 * 7.0 / 8 * 2e9 / 1e10));
    REQUIRE(plan.efficiency_no_overlap);
    CHECK(*plan.step_no_overlap_s == doctest::Approx(0.5 + plan.comm_s));
    CHECK(*plan.efficiency_no_overlap == doctest::Approx(0.5 / (0.5 + plan.comm_s)));
    CHECK(*plan.step_full_overlap_s == doctest::Approx(std::max(0.5, plan.comm_s)));
    CHECK(*plan.efficiency_full_overlap == doctest::Approx(0.5 / std::max(0.5, plan.comm_s)));

    // fp32 doubles the bytes; a bucket larger than the gradients is one bucket
    spec.type = dtype::fp32;
    spec.params = 1000;
    const auto tiny = plan_dp_step(spec, t, link5);
    CHECK(tiny.gradient_bytes == 4000);
    CHECK(tiny.buckets == 1);
    CHECK(tiny.bucket_bytes == 4000);
    CHECK(tiny.last_bucket_bytes == 4000);
    CHECK(tiny.comm_s == doctest::Approx(one(4000)));

    // an exact multiple leaves a full last bucket
    spec.params = 4 * (1 << 20);  // 16 MiB fp32
    spec.bucket_bytes = 4 << 20;
    const auto exact = plan_dp_step(spec, t, link5);
    CHECK(exact.buckets == 4);
    CHECK(exact.last_bucket_bytes == 4 << 20);
}

TEST_CASE("data-parallel step: best algorithm per bucket and refusals") {
    dp_step_spec spec;
    spec.params = 100'000'000;
    const auto t = nodes(512);  // many nodes: the tree's log latency wins for small buckets
    spec.bucket_bytes = 64 << 10;
    const auto best = plan_dp_step(spec, t, link5);
    CHECK(best.bucket.algo == model_algo::tree);
    spec.bucket_bytes = 1ull << 34;  // one huge bucket: bandwidth decides, ring wins
    CHECK(plan_dp_step(spec, nodes(4), link5).bucket.algo == model_algo::ring);

    dp_step_spec bad;
    CHECK_THROWS_AS(plan_dp_step(bad, t, link5), spec_error);
    bad.params = 10;
    bad.bucket_bytes = 0;
    CHECK_THROWS_AS(plan_dp_step(bad, t, link5), spec_error);
    bad.bucket_bytes = 100;
    bad.algo = model_algo::pairwise;
    CHECK_THROWS_AS(plan_dp_step(bad, t, link5), spec_error);
    bad.algo.reset();
    bad.compute_s = -1;
    CHECK_THROWS_AS(plan_dp_step(bad, t, link5), spec_error);
    bad.compute_s.reset();
    bad.params = ~0ull / 2 + 1;
    CHECK_THROWS_AS(plan_dp_step(bad, t, link5), spec_error);
}

TEST_CASE("JSON fields") {
    const auto p = predict(collective_op::allreduce, model_algo::ring, 1 << 20, nodes(4, 8), link5);
    const auto j = to_json(p);
    for (const char* k : {"collective", "algorithm", "bytes", "nodes", "time_s", "algbw_gbit_per_s", "busbw_gbit_per_s"})
        CHECK(j.contains(k));
    CHECK(j.at("collective") == "all_reduce");
    CHECK(j.at("algorithm") == "ring");
    CHECK(j.at("bytes") == 1 << 20);
    CHECK(j.at("nodes") == 4);
    CHECK(j.at("ranks") == 32);
    CHECK(j.at("intra_modelled") == false);
    CHECK(j.at("bottleneck") == "inter-node");
    CHECK(j.at("time_s").get<double>() == doctest::Approx(p.time_s));

    dp_step_spec spec;
    spec.params = 7'000'000'000;
    const auto dj = to_json(plan_dp_step(spec, nodes(64, 8), link5));
    CHECK(dj.at("buckets").get<std::uint64_t>() == (14'000'000'000ull + (25ull << 20) - 1) / (25ull << 20));
    CHECK(dj.at("compute_s").is_null());
    CHECK(dj.at("bucket").at("collective") == "all_reduce");
    const auto tj = to_json(nodes(4, 8));
    CHECK(tj.at("nics_per_node") == 8);
    CHECK(tj.at("intra").is_null());
    CHECK(to_json(link5).at("beta_gbit_per_s").get<double>() == doctest::Approx(80));
}

}  // TEST_SUITE

}  // namespace collectives_test
