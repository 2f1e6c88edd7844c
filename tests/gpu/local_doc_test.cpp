// The document of `meshperf local` (gpu::to_json(local_sweep)) and what reads it: the CLI's
// table (client/render/local_copy.hpp, which also renders a daemon's answer), and
// gpu::run_local_sweep on a node where CUDA cannot run.
#include "client/render/local_copy.hpp"
#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/error.hpp"
#include "gpu/local_sweep.hpp"
#include "gpu/status.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace meshperf;
using namespace meshperf::gpu;

namespace {

copy_result make_result(copy_kind k, std::string src, std::string dst, std::uint64_t mismatched = 0) {
    copy_result r;
    r.kind = k;
    r.src = std::move(src);
    r.dst = std::move(dst);
    for (std::uint64_t size : {4096ull, 1ull << 30}) {
        auto p = summarize_batches(size, {10.0, 12.5, 11.0}, 8);
        p.verify = true;
        p.mismatched_bytes = size == 4096 ? mismatched : 0;
        r.points.push_back(p);
    }
    return r;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("local doc: core::local_copy_spec accepts exactly the copy names gpu::parse_copy_kinds knows") {
    const auto core_accepts = [](const std::string& copies) {
        core::local_copy_spec s;
        s.copies = copies;
        s.sizes = {4096};
        try {
            core::validate(s);
            return true;
        } catch (const core::spec_error&) {
            return false;
        }
    };
    const auto gpu_accepts = [](const std::string& copies) {
        try {
            parse_copy_kinds(copies);
            return true;
        } catch (const core::spec_error&) {
            return false;
        }
    };
    for (const std::string c : {"h2d", "d2h", "d2d", "p2p", "h2d,d2h,d2d,p2p", "p2p,h2d,h2d", "x2y", "H2D", "h2d,", ",h2d",
                                "h2d,,d2d", "h2d d2h", "", "d2d,peer"}) {
        INFO(c);
        CHECK(core_accepts(c) == gpu_accepts(c));
    }
    for (auto k : {copy_kind::h2d, copy_kind::d2h, copy_kind::d2d, copy_kind::p2p}) CHECK(core_accepts(std::string(to_string(k))));
}

TEST_CASE("local doc: to_json(local_sweep) is the meshperf.local/1 document the table reads") {
    local_sweep s;
    s.copies.push_back(make_result(copy_kind::h2d, "host", "cuda:0"));
    s.copies.push_back(make_result(copy_kind::d2h, "cuda:0", "host"));
    copy_matrix m;
    m.device_count = 2;
    m.pairs.push_back(make_result(copy_kind::p2p, "cuda:0", "cuda:1"));
    m.pairs.push_back(make_result(copy_kind::p2p, "cuda:1", "cuda:0"));
    s.p2p.push_back(m);
    const auto doc = to_json(s);
    CHECK(doc["schema"] == "meshperf.local/1");
    REQUIRE(doc["copies"].size() == 2);
    CHECK(doc["copies"][0]["copy"] == "h2d");
    CHECK(doc["copies"][1]["copy"] == "d2h");
    CHECK(doc["copies"][0]["points"].size() == 2);
    REQUIRE(doc["p2p"].size() == 1);
    CHECK(doc["p2p"][0]["waived"].is_null());
    CHECK(doc["p2p"][0]["pairs"].size() == 2);
    CHECK_FALSE(doc.contains("host"));  // the daemon adds it
    const auto t = client::render_local_table(doc);
    INFO(t);
    CHECK(contains(t, "h2d (host -> cuda:0)"));
    CHECK(contains(t, "d2h (cuda:0 -> host)"));
    CHECK(contains(t, "1 GiB"));
    CHECK(contains(t, "11.00"));   // the median batch
    CHECK(contains(t, "10.00"));   // min
    CHECK(contains(t, "12.50"));   // max
    CHECK(contains(t, "yes"));
    CHECK(contains(t, "p2p matrix (GB/s at the largest size, row = source)"));
    CHECK(contains(t, "11.0"));
    CHECK_FALSE(s.verify_failed());
    CHECK_FALSE(client::local_verify_failed(doc));
}

TEST_CASE("local doc: a failed verification shows in the struct, the document and the table") {
    local_sweep s;
    s.copies.push_back(make_result(copy_kind::d2d, "cuda:0", "cuda:0", 3));
    CHECK(s.verify_failed());
    const auto doc = to_json(s);
    CHECK(doc["copies"][0]["verify_failed"] == true);
    CHECK(doc["copies"][0]["points"][0]["mismatched_bytes"] == 3);
    CHECK(client::local_verify_failed(doc));
    CHECK(contains(client::render_local_table(doc), "NO"));
    // In a p2p pair too.
    local_sweep p;
    copy_matrix m;
    m.device_count = 2;
    m.pairs.push_back(make_result(copy_kind::p2p, "cuda:0", "cuda:1", 1));
    p.p2p.push_back(m);
    CHECK(p.verify_failed());
    CHECK(client::local_verify_failed(to_json(p)));
}

TEST_CASE("local doc: a waived matrix says why" ) {
    local_sweep s;
    copy_matrix m;
    m.waived = "the GPU-to-GPU matrix needs at least two GPUs: this node has 1";
    s.p2p.push_back(m);
    const auto doc = to_json(s);
    CHECK(doc["p2p"][0]["waived"] == m.waived);
    CHECK(contains(client::render_local_table(doc), "p2p matrix: the GPU-to-GPU matrix needs at least two GPUs"));
}

TEST_CASE("local doc: without CUDA, run_local_sweep fails with the classified reason" * doctest::skip(cuda_availability().ok())) {
    copy_options o;
    o.sizes = {4096};
    try {
        run_local_sweep({copy_kind::h2d}, o);
        FAIL("expected std::system_error");
    } catch (const std::system_error& e) {
        INFO(e.what());
        CHECK(contains(e.what(), cuda_availability().message.substr(0, 15)));
    }
    // p2p alone does not throw: the matrix is waived with the reason.
    const auto s = run_local_sweep({copy_kind::p2p}, o);
    REQUIRE(s.p2p.size() == 1);
    CHECK(s.p2p[0].waived == cuda_availability().message);
    CHECK_FALSE(s.stopped);
}

TEST_CASE("local doc: a stop requested before the start runs nothing and says so") {
    std::stop_source stop;
    stop.request_stop();
    copy_options o;
    o.sizes = {4096};
    o.stop = stop.get_token();
    const auto s = run_local_sweep({copy_kind::h2d, copy_kind::p2p}, o);
    CHECK(s.copies.empty());
    CHECK(s.p2p.empty());
    CHECK(s.stopped);
}
