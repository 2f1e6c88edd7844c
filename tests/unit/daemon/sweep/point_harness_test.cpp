// daemon/point_harness: the per-point protocol every transport runs through, exercised over
// a real socket pair with plug-ins that only record what the harness asks of them. What is
// proved here holds for TCP and RDMA alike, since neither has its own copy any more: the
// agreed-spec check at the responder (test and size), the silent-peer watchdog, this side's
// failure reported before the silence that followed it, and protocol errors instead of
// dropped frames.
#include "daemon/sweep/point_harness.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <thread>

namespace point_harness_test {  // one per test file: the unit tests are built in batches (unity build)

namespace md = meshperf::daemon;
namespace core = meshperf::core;
using nlohmann::json;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

/// Two frame channels joined by a socket pair: the initiator's and the peer's end.
struct channel_pair {
    std::unique_ptr<md::frame_channel> initiator, peer;
    channel_pair() {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
        initiator = std::make_unique<md::frame_channel>(meshperf::transport::socket_fd(fds[0]), "", "peer test");
        peer = std::make_unique<md::frame_channel>(meshperf::transport::socket_fd(fds[1]), "", "initiator test");
    }
};

core::run_spec adaptive_spec() {
    core::run_spec s;
    s.peer = "127.0.0.1:7470";
    s.tests = {core::test_kind::bandwidth};
    s.sizes = {4096};
    s.max_point_s = 0.05;
    s.warmup_s = 0;
    return s;
}

/// An initiator plug-in that moves no data: it ends when the time cap says so.
struct recording_initiator : md::initiator_point {
    std::string local_error;
    std::chrono::seconds silence{1};
    std::vector<std::string> calls;
    bool aborted = false;

    void arm() override { calls.push_back("arm"); }
    void connect() override { calls.push_back("connect"); }
    void start() override { calls.push_back("start"); }
    void peer_progress(double, const std::vector<std::uint64_t>&) override { calls.push_back("progress"); }
    void sample(double) override {}
    std::vector<md::tracked_flow> flows() const override { return {}; }
    bool ended() override { return false; }
    json stop(bool, bool) override {
        calls.push_back("stop");
        return json::object();
    }
    bool peer_reports_until_done() const override { return false; }
    std::chrono::seconds peer_silence_limit() const override { return silence; }
    std::string error() const override { return local_error; }
    bool verify_failed() const override { return false; }
    core::point_result figures(const json& peer_done) override {
        calls.push_back("figures");
        core::point_result p;
        p.test = core::test_kind::bandwidth;
        p.size_bytes = peer_done.value("size_seen", std::uint64_t{0});
        return p;
    }
    void abort() noexcept override { aborted = true; }
    std::string_view data_path_name() const override { return "data stream"; }
    std::vector<meshperf::transport::thread_cpu_record> thread_cpus() const override { return {}; }
};

/// A peer that answers point_begin with point_ready, then does what `after_go` says.
template <class AfterGo>
std::thread scripted_peer(md::frame_channel& ch, AfterGo after_go) {
    return std::thread([&ch, after_go] {
        try {
            const auto begin = ch.receive(clock_type::now() + 5s);
            ch.send(core::frame_type::point_ready, json::object(), clock_type::now() + 5s);
            const auto go = ch.receive(clock_type::now() + 5s);
            (void)begin;
            (void)go;
            after_go(ch);
        } catch (const std::exception&) {
            // the initiator closed the channel: the test decides what that means
        }
    });
}

std::string failure_of(channel_pair& p, recording_initiator& ops, const core::run_spec& spec, double& seconds) {
    std::atomic<bool> cancel{false};
    const auto t0 = clock_type::now();
    std::string what;
    try {
        (void)md::run_initiator_point(*p.initiator, spec, {}, md::run_placement{}, {core::test_kind::bandwidth, 4096, 1}, ops, cancel, "/sys");
    } catch (const std::exception& e) {
        what = e.what();
    }
    seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    return what;
}

}  // namespace

TEST_CASE("point harness: the responder refuses a point whose test or size is outside the agreed spec") {
    core::run_spec spec = adaptive_spec();
    spec.tests = {core::test_kind::latency};
    spec.sizes = {8, 4096};
    const auto ok = md::parse_point_begin(spec, {{"test", "latency"}, {"size", 4096}, {"index", 2}});
    CHECK(ok.test == core::test_kind::latency);
    CHECK(ok.size == 4096);
    CHECK(ok.index == 2);
    // The RDMA responder used to check only the size: a bandwidth point at an agreed size passed.
    CHECK_THROWS_WITH_AS(md::parse_point_begin(spec, {{"test", "bandwidth"}, {"size", 4096}, {"index", 1}}),
                         doctest::Contains("outside the agreed run spec"), md::session_error);
    CHECK_THROWS_WITH_AS(md::parse_point_begin(spec, {{"test", "latency"}, {"size", 16}, {"index", 1}}),
                         doctest::Contains("outside the agreed run spec"), md::session_error);
    CHECK_THROWS_WITH_AS(md::parse_point_begin(spec, {{"test", "latency"}, {"size", -1}, {"index", 1}}),
                         doctest::Contains("malformed point_begin"), md::session_error);
    CHECK_THROWS_AS(md::parse_point_begin(spec, {{"test", "latency"}, {"size", 8}}), md::session_error);
}

TEST_CASE("point harness: a peer silent after point_stop is named within its silence limit, not after 30 s") {
    channel_pair p;
    recording_initiator ops;
    ops.silence = 1s;
    auto peer = scripted_peer(*p.peer, [](md::frame_channel& ch) {
        (void)ch.receive(clock_type::now() + 5s);  // point_stop, then nothing: frozen
        std::this_thread::sleep_for(4s);
    });
    double seconds = 0;
    const auto what = failure_of(p, ops, adaptive_spec(), seconds);
    p.initiator.reset();
    peer.join();
    CHECK(what.find("did not answer in time: nothing from it for 1 s") != std::string::npos);
    CHECK(seconds < 3.0);
    CHECK(seconds > 0.9);
    CHECK(ops.aborted);
}

TEST_CASE("point harness: this side's own failure is reported before the silence that followed it") {
    channel_pair p;
    recording_initiator ops;
    ops.local_error = "recv: Connection reset by peer";
    auto peer = scripted_peer(*p.peer, [](md::frame_channel& ch) {
        (void)ch.receive(clock_type::now() + 5s);
        std::this_thread::sleep_for(6s);
    });
    double seconds = 0;
    const auto what = failure_of(p, ops, adaptive_spec(), seconds);
    p.initiator.reset();
    peer.join();
    CHECK(what.find("data stream failed here: recv: Connection reset by peer; the peer did not report either") == 0);
    CHECK(seconds < 4.0);  // failed_point_done_timeout (3 s) at the latest, since this side already failed
}

TEST_CASE("point harness: a frame out of protocol is an error, never dropped") {
    channel_pair p;
    recording_initiator ops;
    auto peer = scripted_peer(*p.peer, [](md::frame_channel& ch) {
        (void)ch.receive(clock_type::now() + 5s);
        ch.send(core::frame_type::hello, json::object(), clock_type::now() + 5s);
        std::this_thread::sleep_for(1s);
    });
    double seconds = 0;
    const auto what = failure_of(p, ops, adaptive_spec(), seconds);
    p.initiator.reset();
    peer.join();
    INFO(what);
    CHECK(what.find("unexpected hello during a point") != std::string::npos);
}

TEST_CASE("point harness: the peer's malformed verdicts are protocol errors") {
    channel_pair p;
    recording_initiator ops;
    auto peer = scripted_peer(*p.peer, [](md::frame_channel& ch) {
        (void)ch.receive(clock_type::now() + 5s);
        ch.send(core::frame_type::point_done, {{"verify_failed", "yes"}}, clock_type::now() + 5s);
        std::this_thread::sleep_for(1s);
    });
    double seconds = 0;
    const auto what = failure_of(p, ops, adaptive_spec(), seconds);
    p.initiator.reset();
    peer.join();
    CHECK(what.find("malformed \"verify_failed\"") != std::string::npos);
}

namespace {

/// A responder plug-in that counts nothing: it ends when the initiator says stop.
struct recording_responder : md::responder_point {
    std::vector<std::string> calls;
    bool stop_seen = false;
    void arm() override { calls.push_back("arm"); }
    void connect() override { calls.push_back("connect"); }
    void start() override { calls.push_back("start"); }
    bool reports() const override { return true; }
    std::vector<std::uint64_t> counted_bytes() const override { return {4096}; }
    void check_limits() override {}
    void stop(const json&) override { calls.push_back("stop"); }
    bool ended(bool stop_received) const override { return stop_received; }
    void finish(bool) override { calls.push_back("finish"); }
    json done_fields() override { return {{"size_seen", 4096}}; }
    double cpu_seconds() const override { return 0.01; }
    double wall_seconds() const override { return 0.05; }
    std::string error() const override { return {}; }
    bool verify_failed() const override { return false; }
    void abort() noexcept override { calls.push_back("abort"); }
    std::vector<meshperf::transport::thread_cpu_record> thread_cpus() const override { return {}; }
};

}  // namespace

TEST_CASE("point harness: both sides through one point, every step in order") {
    channel_pair p;
    const auto spec = adaptive_spec();
    recording_responder peer_ops;
    std::string peer_failure;
    std::thread peer([&] {
        try {
            const auto begin = p.peer->receive(clock_type::now() + 5s);
            if (begin.type != core::frame_type::point_begin) throw std::runtime_error("expected point_begin");
            const auto key = md::parse_point_begin(spec, begin.body);
            md::run_responder_point(*p.peer, spec, {}, md::run_placement{}, key, peer_ops, "/sys");
        } catch (const std::exception& e) {
            peer_failure = e.what();
        }
    });
    recording_initiator ops;
    std::atomic<bool> cancel{false};
    const auto point = md::run_initiator_point(*p.initiator, spec, {}, md::run_placement{}, {core::test_kind::bandwidth, 4096, 1}, ops, cancel, "/sys");
    peer.join();
    CHECK(peer_failure.empty());
    CHECK(point.size_bytes == 4096);  // figures() saw the peer's point_done
    REQUIRE(ops.calls.size() >= 5);
    CHECK(ops.calls[0] == "arm");
    CHECK(ops.calls[1] == "connect");
    CHECK(ops.calls[2] == "start");
    CHECK(ops.calls.back() == "figures");
    CHECK(std::find(ops.calls.begin(), ops.calls.end(), "progress") != ops.calls.end());  // the peer reported
    CHECK_FALSE(ops.aborted);
    CHECK(peer_ops.calls == std::vector<std::string>{"arm", "connect", "start", "stop", "finish"});
}

}  // namespace point_harness_test
