// The table of `meshperf local` from its JSON document (client/render/local_copy.hpp), as a
// daemon returns it; tests/gpu/local_doc_test.cpp checks it reads what gpu::to_json writes.
#include "client/render/local_copy.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace local_render_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

namespace {

json point(std::uint64_t size, double rate, bool verify, std::uint64_t mismatched = 0) {
    return {{"size_bytes", size}, {"gb_per_s", rate}, {"gb_per_s_min", rate * 0.9}, {"gb_per_s_max", rate * 1.1},
            {"seconds_per_copy", size / (rate * 1e9)}, {"batches", 5}, {"copies_per_batch", 40}, {"verify", verify},
            {"verified", verify && mismatched == 0}, {"mismatched_bytes", mismatched}};
}

json sweep(const std::string& copy, const std::string& src, const std::string& dst, json points, bool verify_failed = false) {
    return {{"copy", copy}, {"src", src}, {"dst", dst}, {"peer_access", false}, {"cancelled", false},
            {"verify_failed", verify_failed}, {"points", std::move(points)}, {"warnings", json::array()}};
}

json doc_with(json copies, json p2p = json::array()) {
    return {{"schema", "meshperf.local/1"}, {"copies", std::move(copies)}, {"p2p", std::move(p2p)}};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("local render: one table per copy, every size, its figures and verification") {
    auto doc = doc_with(json::array({sweep("h2d", "host", "cuda:0", json::array({point(4096, 1.234, true), point(1u << 30, 52.5, true)})),
                                     sweep("d2d", "cuda:0", "cuda:0", json::array({point(1048576, 1800.0, false)}))}));
    doc["copies"][0]["warnings"].push_back("pinned host memory on NUMA node 1, GPU on node 0");
    const auto t = client::render_local_table(doc);
    INFO(t);
    CHECK(contains(t, "\nh2d (host -> cuda:0)\n"));
    CHECK(contains(t, "\nd2d (cuda:0 -> cuda:0)\n"));
    CHECK(t.find("h2d (host") < t.find("d2d (cuda:0"));  // in the order of the document
    CHECK(contains(t, "copies/batch"));
    CHECK(contains(t, "4 KiB"));
    CHECK(contains(t, "1 GiB"));
    CHECK(contains(t, "1.23"));      // GB/s, two decimals
    CHECK(contains(t, "52.50"));
    CHECK(contains(t, "47.25"));     // min
    CHECK(contains(t, "57.75"));     // max
    CHECK(contains(t, "1800.00"));
    CHECK(contains(t, "yes"));
    CHECK_FALSE(contains(t, "NO"));
    CHECK(contains(t, "  warning: pinned host memory on NUMA node 1, GPU on node 0\n"));
    CHECK_FALSE(contains(t, "copy sweeps on"));  // no host: swept in this process
    CHECK_FALSE(contains(t, "stopped"));
    CHECK_FALSE(client::local_verify_failed(doc));
}

TEST_CASE("local render: a daemon's document names its node, a failed verification and an early stop") {
    auto doc = doc_with(json::array({sweep("d2h", "cuda:1", "host", json::array({point(65536, 20.0, true, 17)}), true)}));
    doc["host"] = "gpu-node-07";
    doc["copies"][0]["cancelled"] = true;
    doc["stopped"] = "the copy sweep reached this daemon's time cap (600 s) and stopped";
    const auto t = client::render_local_table(doc);
    INFO(t);
    CHECK(t.rfind("copy sweeps on gpu-node-07\n", 0) == 0);
    CHECK(contains(t, "NO"));
    CHECK(contains(t, "(stopped before every size was measured)"));
    CHECK(contains(t, "\nstopped: the copy sweep reached this daemon's time cap (600 s) and stopped\n"));
    CHECK(client::local_verify_failed(doc));
}

TEST_CASE("local render: the p2p matrix, or why it was waived") {
    json pairs = json::array({sweep("p2p", "cuda:0", "cuda:1", json::array({point(4096, 3.0, false), point(1u << 26, 48.31, false)})),
                              sweep("p2p", "cuda:1", "cuda:0", json::array({point(4096, 3.0, false), point(1u << 26, 47.0, false)}))});
    const auto t = client::render_local_table(doc_with(json::array(), json::array({{{"device_count", 2}, {"waived", nullptr}, {"pairs", pairs}}})));
    INFO(t);
    CHECK(contains(t, "p2p matrix (GB/s at the largest size, row = source)"));
    CHECK(contains(t, "cuda:0"));
    CHECK(contains(t, "48.3"));  // (0 -> 1) at the largest size, one decimal
    CHECK(contains(t, "47.0"));
    CHECK(contains(t, "-"));     // the diagonal
    const auto w = client::render_local_table(doc_with(
        json::array(), json::array({{{"device_count", 1}, {"waived", "the GPU-to-GPU matrix needs at least two GPUs: this node has 1"}, {"pairs", json::array()}}})));
    CHECK(contains(w, "\np2p matrix: the GPU-to-GPU matrix needs at least two GPUs: this node has 1\n"));
    auto failed = doc_with(json::array(), json::array({{{"device_count", 2}, {"waived", nullptr}, {"pairs", pairs}}}));
    CHECK_FALSE(client::local_verify_failed(failed));
    failed["p2p"][0]["pairs"][1]["verify_failed"] = true;
    CHECK(client::local_verify_failed(failed));
}

TEST_CASE("local render: a document without the fields it needs throws instead of printing nonsense") {
    CHECK_THROWS_AS(client::render_local_table(json::object()), json::exception);
    CHECK_THROWS_AS(client::render_local_table(doc_with(json::array({{{"copy", "h2d"}}}))), json::exception);
    auto bad_point = doc_with(json::array({sweep("h2d", "host", "cuda:0", json::array({{{"size_bytes", "big"}}}))}));
    CHECK_THROWS_AS(client::render_local_table(bad_point), json::exception);
}

}  // namespace local_render_test
