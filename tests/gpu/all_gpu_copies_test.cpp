// gpu::run_on_all_gpus (`meshperf local --all-gpus`): one thread per GPU, each size begun on
// every GPU together, a failing or stopped GPU never leaving the others waiting; the
// document, its table, and the manifest's copy floors. The per-GPU sweep is a stand-in
// that behaves as run_copy_sweep does around its sizes (stop check, before_size, a point):
// on a GPU it is run_copy_sweep itself (tests/gpu/device-check runs `local --all-gpus`).
#include "client/render/local_copy.hpp"
#include "node/copy_floors.hpp"
#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "gpu/all_gpu_copies.hpp"
#include "gpu/copy_json.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace meshperf;
using namespace meshperf::gpu;
using clock_type = std::chrono::steady_clock;

namespace {

/// When each device began each size, ended its timed part, and stopped loading it.
struct span {
    clock_type::time_point begin, timed_end, load_end;
};
struct timeline {
    std::mutex lock;
    std::map<std::pair<int, std::size_t>, span> spans;
};

/// A sweep like run_copy_sweep's loop: device d reads 10 + d GB/s, takes (d + 1) ms a size;
/// `fail_device` throws at its size `fail_at`.
device_sweep stand_in(timeline* t, int fail_device = -1, std::size_t fail_at = 0) {
    return [t, fail_device, fail_at](copy_kind kind, const copy_options& o) {
        copy_result r;
        r.kind = kind;
        const std::string gpu = fmt::format("cuda:{}", o.device);
        r.src = kind == copy_kind::h2d ? "host" : gpu;
        r.dst = kind == copy_kind::d2h ? "host" : gpu;
        for (std::size_t i = 0; i < o.sizes.size(); ++i) {
            if (o.stop.stop_requested()) {
                r.cancelled = true;
                break;
            }
            if (o.before_size) o.before_size(o.sizes[i]);
            const auto begin = clock_type::now();
            if (o.device == fail_device && i == fail_at) throw std::runtime_error(fmt::format("{}: out of memory", gpu));
            std::this_thread::sleep_for(std::chrono::milliseconds(3 * (o.device + 1)));  // the timed batches
            const auto timed_end = clock_type::now();
            if (o.timed_done) o.timed_done();
            while (o.keep_loading && o.keep_loading()) std::this_thread::sleep_for(std::chrono::microseconds(100));  // one more copy
            if (t) {
                const std::lock_guard lock(t->lock);
                t->spans[{o.device, i}] = {begin, timed_end, clock_type::now()};
            }
            const double rate = 10.0 + o.device;
            r.points.push_back(summarize_batches(o.sizes[i], {rate, rate, rate}, 4));
            if (o.on_point) o.on_point(r.points.back());
        }
        return r;
    };
}

copy_options four_sizes() {
    copy_options o;
    o.sizes = {4096, 65536, 1 << 20, 1 << 26};
    return o;
}

}  // namespace

TEST_CASE("all GPUs: each size begins on every GPU only after every GPU ended the size before, and no GPU goes quiet "
          "while another is timed") {
    timeline t;
    std::atomic<int> points{0};
    auto o = four_sizes();
    o.on_point = [&](const copy_point&) { ++points; };
    const auto a = run_on_all_gpus(copy_kind::h2d, 4, o, stand_in(&t));
    REQUIRE(a.per_gpu.size() == 4);
    CHECK(points == 16);
    for (std::size_t i = 0; i < o.sizes.size(); ++i) {
        auto last_timed = clock_type::time_point::min();
        for (int d = 0; d < 4; ++d) last_timed = std::max(last_timed, t.spans.at({d, i}).timed_end);
        // Every GPU (cuda:0 is timed for 3 ms, cuda:3 for 12) loads the size until the last is timed.
        for (int d = 0; d < 4; ++d) CHECK(t.spans.at({d, i}).load_end >= last_timed);
        if (i == 0) continue;
        auto last_end = clock_type::time_point::min(), first_begin = clock_type::time_point::max();
        for (int d = 0; d < 4; ++d) {
            last_end = std::max(last_end, t.spans.at({d, i - 1}).load_end);
            first_begin = std::min(first_begin, t.spans.at({d, i}).begin);
        }
        CHECK(first_begin >= last_end);
    }
    REQUIRE(a.points.size() == 4);
    for (const auto& p : a.points) {
        CHECK(p.gb_per_s_sum == doctest::Approx(10 + 11 + 12 + 13));
        CHECK(p.gb_per_s_min == doctest::Approx(10));
        CHECK(p.slowest == "cuda:0");
    }
    CHECK(a.per_gpu[2].dst == "cuda:2");
    CHECK_FALSE(a.verify_failed());
}

TEST_CASE("all GPUs: a GPU that fails mid-sweep stops the others, which never wait for it, and its error comes back") {
    timeline t;
    const auto started = clock_type::now();
    CHECK_THROWS_WITH(run_on_all_gpus(copy_kind::d2h, 3, four_sizes(), stand_in(&t, 1, 1)), "cuda:1: out of memory");
    CHECK(clock_type::now() - started < std::chrono::seconds(5));
    // The others measured at most the sizes up to the failed one and its next.
    for (int d : {0, 2}) CHECK_FALSE(t.spans.count({d, 3}));
}

TEST_CASE("all GPUs: the caller's stop ends every GPU's sweep at its next size") {
    std::stop_source stop;
    auto o = four_sizes();
    o.stop = stop.get_token();
    std::atomic<int> points{0};
    o.on_point = [&](const copy_point&) {
        if (++points == 2) stop.request_stop();
    };
    const auto a = run_on_all_gpus(copy_kind::h2d, 2, o, stand_in(nullptr));
    REQUIRE(a.per_gpu.size() == 2);
    for (const auto& r : a.per_gpu) {
        CHECK(r.cancelled);
        CHECK(r.points.size() < 4);
    }
    CHECK(a.points.size() <= 2);
}

TEST_CASE("all GPUs: p2p and no GPU are refused") {
    CHECK_THROWS_WITH_AS(run_on_all_gpus(copy_kind::p2p, 2, four_sizes(), stand_in(nullptr)),
                         doctest::Contains("matrix already measures every pair"), core::spec_error);
    CHECK_THROWS_WITH_AS(run_on_all_gpus(copy_kind::h2d, 0, four_sizes(), stand_in(nullptr)), doctest::Contains("this node has 0"),
                         core::spec_error);
    core::local_copy_spec s;
    s.sizes = {4096};
    s.copies = "h2d,p2p";
    s.all_gpus = true;
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("field 'all_gpus' with p2p"), core::spec_error);
    s.copies = "h2d,d2h";
    const auto back = core::local_copy_spec_from_json(core::to_json(s));
    CHECK(back.all_gpus);
    s.all_gpus = false;
    CHECK_FALSE(core::to_json(s).contains("all_gpus"));  // an older daemon never sees it unless asked
}

TEST_CASE("all GPUs: the document, its table, and the manifest's copy floors") {
    local_sweep sweep;
    sweep.all_gpus.push_back(run_on_all_gpus(copy_kind::h2d, 4, four_sizes(), stand_in(nullptr)));
    const auto doc = to_json(sweep);
    REQUIRE(doc["all_gpus"].size() == 1);
    CHECK(doc["all_gpus"][0]["devices"] == 4);
    CHECK(doc["all_gpus"][0]["points"][3]["gb_per_s_sum"].get<double>() == doctest::Approx(46));
    const auto table = client::render_local_table(doc);
    CHECK(table.find("h2d on all 4 GPUs at once") != std::string::npos);
    CHECK(table.find("cuda:0 10.00") != std::string::npos);  // the slowest, per size
    CHECK(table.find("46.00") != std::string::npos);
    CHECK_FALSE(client::local_verify_failed(doc));

    node::node_manifest expect;
    expect.h2d_floor_gb_per_s = 11.5;  // cuda:0 (10) and cuda:1 (11) below
    auto findings = node::judge_copy_floors(doc, expect);
    REQUIRE(findings.size() == 4);
    CHECK(findings[0].below);
    CHECK(findings[1].below);
    CHECK_FALSE(findings[2].below);
    CHECK(findings[0].size_bytes == (1u << 26));
    auto v = node::copy_floor_text(findings);
    CHECK(v.exit_code == 2);
    CHECK(v.text.find("4 GPU figures, 2 below: CRITICAL") != std::string::npos);
    CHECK(v.text.find("h2d cuda:1: 11.00 GB/s at 64 MiB") != std::string::npos);
    expect.h2d_floor_gb_per_s = 9.0;
    CHECK(node::copy_floor_text(node::judge_copy_floors(doc, expect)).exit_code == 0);
    // A floor for a direction the sweep did not run is not a pass.
    expect.d2h_floor_gb_per_s = 9.0;
    findings = node::judge_copy_floors(doc, expect);
    REQUIRE(findings.size() == 5);
    CHECK(findings.back().below);
    v = node::copy_floor_text(findings);
    CHECK(v.exit_code == 2);
    CHECK(v.text.find("d2h every GPU: not measured") != std::string::npos);
}
