// POST /v1/local's job and body (daemon/runs/local_copy_job.hpp, daemon/api/local_copy_route.hpp):
// the measurement gate is held while the sweep runs and released however it ends, a busy
// gate refuses to start, the time cap stops the sweep, a failing sweep becomes a 500.
#include "core/error.hpp"
#include "daemon/runs/local_copy_job.hpp"
#include "daemon/api/local_copy_route.hpp"

#include <atomic>
#include <chrono>
#include <doctest/doctest.h>
#include <stdexcept>
#include <thread>

namespace local_copy_job_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// Waits up to 10 s for the job to end.
bool wait_done(const daemon::local_copy_job& job) {
    for (int i = 0; i < 1000 && !job.done(); ++i) std::this_thread::sleep_for(10ms);
    return job.done();
}

/// Waits up to 10 s for the gate to be free.
bool wait_free(const daemon::measurement_gate& gate) {
    for (int i = 0; i < 1000 && !gate.holder().empty(); ++i) std::this_thread::sleep_for(10ms);
    return gate.holder().empty();
}

}  // namespace

TEST_CASE("local copy job: holds the gate while it runs, answers 200 with the document, then frees the gate") {
    daemon::measurement_gate gate;
    std::atomic<bool> go{false};
    std::string holder;
    auto job = daemon::local_copy_job::start(
        gate, "copy sweep h2d on cuda:0",
        [&go](std::stop_token) {
            while (!go) std::this_thread::sleep_for(1ms);
            return json{{"schema", "meshperf.local/1"}, {"copies", json::array()}, {"p2p", json::array()}};
        },
        10s, holder);
    REQUIRE(job);
    CHECK(gate.holder() == "copy sweep h2d on cuda:0");
    CHECK_FALSE(job->done());
    CHECK(job->reply().status == 500);  // not yet
    // A network measurement cannot start meanwhile.
    std::string seen;
    CHECK_FALSE(gate.try_acquire("run r-1", seen));
    CHECK(seen == "copy sweep h2d on cuda:0");
    go = true;
    REQUIRE(wait_done(*job));
    const auto r = job->reply();
    CHECK(r.status == 200);
    CHECK(r.body["schema"] == "meshperf.local/1");
    CHECK(gate.holder().empty());
}

TEST_CASE("local copy job: a busy gate refuses to start, and nothing runs") {
    daemon::measurement_gate gate;
    std::string h;
    const auto run_lease = gate.try_acquire("run r-20240601-1", h);  // a run holds the gate
    REQUIRE(run_lease);
    std::atomic<bool> ran{false};
    std::string holder;
    auto job = daemon::local_copy_job::start(gate, "copy sweep", [&ran](std::stop_token) { ran = true; return json::object(); }, 10s,
                                             holder);
    CHECK_FALSE(job);
    CHECK(holder == "run r-20240601-1");
    std::this_thread::sleep_for(20ms);
    CHECK_FALSE(ran);
    CHECK(gate.holder() == "run r-20240601-1");  // still the run's
    const auto busy = daemon::local_copy_busy_reply(holder);
    CHECK(busy.status == 503);
    CHECK(busy.retry_after_s == daemon::local_copy_busy_retry_after_s);
    CHECK(busy.body["retry_after_s"] == daemon::local_copy_busy_retry_after_s);
    CHECK(busy.body["error"].get<std::string>().find("measuring (run r-20240601-1)") != std::string::npos);
}

TEST_CASE("local copy job: a failing sweep answers 500 with its reason and frees the gate") {
    daemon::measurement_gate gate;
    std::string holder;
    auto job = daemon::local_copy_job::start(
        gate, "copy sweep", [](std::stop_token) -> json { throw std::runtime_error("cudaMalloc(1 GiB) on cuda:0: out of memory"); },
        10s, holder);
    REQUIRE(job);
    REQUIRE(wait_done(*job));
    const auto r = job->reply();
    CHECK(r.status == 500);
    CHECK(r.body["error"] == "the copy sweep failed: cudaMalloc(1 GiB) on cuda:0: out of memory");
    CHECK(wait_free(gate));
}

TEST_CASE("local copy job: the time cap stops the sweep, which answers what it has") {
    daemon::measurement_gate gate;
    std::string holder;
    const auto t0 = std::chrono::steady_clock::now();
    auto job = daemon::local_copy_job::start(
        gate, "copy sweep",
        [](std::stop_token stop) {
            while (!stop.stop_requested()) std::this_thread::sleep_for(1ms);
            return json{{"stopped", "time cap"}};
        },
        100ms, holder);
    REQUIRE(job);
    REQUIRE(wait_done(*job));
    const auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took >= 100ms);
    CHECK(took < 5s);
    CHECK(job->reply().status == 200);
    CHECK(job->reply().body["stopped"] == "time cap");
    CHECK(wait_free(gate));
}

TEST_CASE("local copy job: a sweep that ends first is not stopped") {
    daemon::measurement_gate gate;
    std::string holder;
    auto job = daemon::local_copy_job::start(gate, "copy sweep", [](std::stop_token stop) { return json{{"stopped", stop.stop_requested()}}; },
                                             10s, holder);
    REQUIRE(job);
    REQUIRE(wait_done(*job));
    CHECK(job->reply().body["stopped"] == false);
}

TEST_CASE("local copy route: the body must be JSON, and is read with the spec's checks") {
    CHECK_THROWS_WITH_AS(daemon::read_local_copy_body("{not json"), doctest::Contains("not valid JSON"), core::spec_error);
    CHECK_THROWS_WITH_AS(daemon::read_local_copy_body(R"({"device": -1})"), doctest::Contains("field 'device'"), core::spec_error);
    const auto s = daemon::read_local_copy_body(R"({"copies": "h2d", "sizes": "64M", "verify": true})");
    CHECK(s.copies == "h2d");
    CHECK(s.sizes == std::vector<std::uint64_t>{64u << 20});
    CHECK(s.verify);
}

}  // namespace local_copy_job_test
