// The TCP loops with staged memory (transport/tcp/staged_stream.hpp) over real loopback TCP
// connections, both daemons' point_side objects in one process. The "device" is host memory
// and the staging engine queues its copies and runs them only when waited for, as a CUDA
// stream may: a loop that reads a chunk before its copy was waited for sees stale bytes,
// and --verify catches it. What this does not show: that CUDA's copies and their overlap
// behave (tests/gpu/device-check runs the same loops with gpu::staging on a GPU).
#include "core/run_spec.hpp"
#include "gpu/stager.hpp"
#include "transport/socket.hpp"
#include "transport/tcp/pattern.hpp"
#include "transport/tcp/point_side.hpp"
#include "transport/tcp/staged_stream.hpp"
#include "tests/unit/transport/tcp/loopback_pairs.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <deque>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tcp_staged_stream_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::transport::tcp;
using transport::socket_fd;

namespace {

// Copies queue up per engine and run, in order, only when waited for.
class deferred_host_engine {
public:
    deferred_host_engine(std::size_t chunk, unsigned chunks, int fail_at_copy)
        : chunk_(chunk), chunks_(chunks), host_(chunk * chunks), fail_at_(fail_at_copy) {}
    std::size_t chunk_bytes() const { return chunk_; }
    unsigned chunks() const { return chunks_; }
    std::byte* slot(unsigned i) { return host_.data() + i * chunk_; }
    void begin() {}
    void copy_to_host(unsigned s, const void* src, std::size_t n) { enqueue({slot(s), src, n, s}); }
    void copy_to_device(void* dst, unsigned s, std::size_t n) { enqueue({dst, slot(s), n, s}); }
    void wait(unsigned s) {  // runs queued copies in order up to the last one for slot s
        std::size_t last = queue_.size();
        for (std::size_t i = 0; i < queue_.size(); ++i)
            if (queue_[i].slot == s) last = i;
        for (std::size_t i = 0; last < queue_.size() && i <= last; ++i) run_front();
    }
    void wait_all() {
        while (!queue_.empty()) run_front();
    }

private:
    struct copy {
        void* dst;
        const void* src;
        std::size_t n;
        unsigned slot;
    };
    void enqueue(copy c) {
        if (fail_at_ >= 0 && copies_++ == fail_at_) throw std::runtime_error("injected copy failure");
        queue_.push_back(c);
    }
    void run_front() {
        std::memcpy(queue_.front().dst, queue_.front().src, queue_.front().n);
        queue_.pop_front();
    }
    std::size_t chunk_;
    unsigned chunks_;
    std::vector<std::byte> host_;
    std::deque<copy> queue_;
    int fail_at_;
    int copies_ = 0;
};

struct host_device_memory {
    std::vector<std::byte> src, dst;
    void* source() { return src.data(); }
    void* destination() { return dst.data(); }
};

using host_staged = staged_stream_on<gpu::basic_stager<deferred_host_engine>, host_device_memory>;

struct staging_shape {
    std::size_t chunk = 4096;
    unsigned chunks = 4;
    int fail_at_copy = -1;     // throw on this copy (0-based); -1: never
    std::size_t corrupt_at = static_cast<std::size_t>(-1);  // flip this source byte
};

staged_stream_factory host_staging(const core::run_spec& spec, staging_shape shape = {}) {
    return [spec, shape](stream_role role, std::size_t size, std::size_t) -> std::unique_ptr<staged_stream> {
        host_device_memory m;
        if (role == stream_role::send || role == stream_role::ping) {
            const auto p = make_pattern_buffer(size);
            m.src.resize(size);
            std::memcpy(m.src.data(), p.data(), size);
            if (shape.corrupt_at < size) m.src[shape.corrupt_at] ^= std::byte{0x5a};
        }
        if (role != stream_role::send) m.dst.assign(size, std::byte{0});
        return std::make_unique<host_staged>(std::move(m),
                                             gpu::basic_stager<deferred_host_engine>(std::min(shape.chunk, size), shape.chunks,
                                                                                     shape.fail_at_copy),
                                             size, spec.verify, spec.busy_poll);
    };
}


core::run_spec fixed_spec(std::uint64_t iterations, bool verify) {
    core::run_spec s;
    s.iterations = iterations;
    s.verify = verify;
    s.streams = 1;
    return s;
}

struct bandwidth_outcome {
    std::string sender_error, receiver_error;
    bool verify_failed = false;
    std::uint64_t measured = 0, received = 0;
};

// One bandwidth point, initiator sending; either side may be staged (empty factory: host).
bandwidth_outcome bandwidth_point(const core::run_spec& spec, std::uint64_t size, const staged_stream_factory& tx_memory,
                                  const staged_stream_factory& rx_memory) {
    auto [left, right] = test::loopback_tcp_pairs(1);
    const auto roles = initiator_roles(core::test_kind::bandwidth, 1, false);
    std::vector<stream_role> mirrored;
    for (auto r : roles) mirrored.push_back(mirror(r));
    point_side tx(spec, core::test_kind::bandwidth, size, std::move(left), roles, 0, tx_memory);
    point_side rx(spec, core::test_kind::bandwidth, size, std::move(right), mirrored, 0, rx_memory);
    rx.start();
    tx.start();
    rx.join();
    if (!rx.error().empty()) tx.abort();  // the receiver gave up: end the sender as the session would
    tx.join();
    bandwidth_outcome o{tx.error(), rx.error(), rx.verify_failed(), 0, 0};
    for (auto b : rx.measured_bytes()) o.measured += b;
    for (auto b : rx.received_bytes()) o.received += b;
    return o;
}

}  // namespace

TEST_CASE("staged TCP: every byte of every message arrives, at any message and chunk shape") {
    const auto spec = fixed_spec(20, true);
    for (std::uint64_t size : {1ull, 999ull, 4096ull, 100'000ull, 3ull << 20}) {
        for (unsigned chunks : {1u, 4u}) {
            CAPTURE(size);
            CAPTURE(chunks);
            staging_shape shape{4096, chunks};
            const auto o = bandwidth_point(spec, size, host_staging(spec, shape), host_staging(spec, shape));
            CHECK(o.sender_error == "");
            CHECK(o.receiver_error == "");
            CHECK_FALSE(o.verify_failed);
            CHECK(o.measured == 20 * size);
            CHECK(o.received == (warm_messages(size) + 20) * size);
        }
    }
}

TEST_CASE("staged TCP: host and staged sides mix, the pattern agrees") {
    const auto spec = fixed_spec(30, true);
    for (std::uint64_t size : {1ull, 777ull, 65536ull, 1'000'003ull}) {
        CAPTURE(size);
        auto o = bandwidth_point(spec, size, host_staging(spec), {});  // GPU sender, host receiver
        CHECK(o.receiver_error == "");
        CHECK_FALSE(o.verify_failed);
        CHECK(o.measured == 30 * size);
        o = bandwidth_point(spec, size, {}, host_staging(spec));  // host sender, GPU receiver
        CHECK(o.receiver_error == "");
        CHECK_FALSE(o.verify_failed);
        CHECK(o.measured == 30 * size);
    }
}

TEST_CASE("staged TCP: a corrupted source byte fails verification, staged or host receiver") {
    const auto spec = fixed_spec(5, true);
    staging_shape bad;
    bad.corrupt_at = 5000;
    auto o = bandwidth_point(spec, 8192, host_staging(spec, bad), host_staging(spec));
    CHECK(o.verify_failed);
    CHECK(o.receiver_error.find("data corrupted") != std::string::npos);
    o = bandwidth_point(spec, 8192, host_staging(spec, bad), {});
    CHECK(o.verify_failed);
}

TEST_CASE("staged TCP: a failing copy ends the stream with the copy's words, and nothing hangs") {
    const auto spec = fixed_spec(50, false);
    staging_shape failing;
    failing.fail_at_copy = 3;
    const auto t0 = std::chrono::steady_clock::now();
    auto o = bandwidth_point(spec, 65536, host_staging(spec), host_staging(spec, failing));
    CHECK(o.receiver_error == "a GPU staging copy failed: injected copy failure");
    o = bandwidth_point(spec, 65536, host_staging(spec, failing), host_staging(spec));
    CHECK(o.sender_error == "a GPU staging copy failed: injected copy failure");
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("staged TCP: a duration point stops mid-message cleanly and still verifies") {
    core::run_spec spec;
    spec.duration_s = 0.2;
    spec.verify = true;
    auto [left, right] = test::loopback_tcp_pairs(1);
    const std::uint64_t size = 1 << 20;
    staging_shape shape{65536, 4};
    point_side tx(spec, core::test_kind::bandwidth, size, std::move(left), {stream_role::send}, 0, host_staging(spec, shape));
    point_side rx(spec, core::test_kind::bandwidth, size, std::move(right), {stream_role::receive}, 0, host_staging(spec, shape));
    rx.start();
    tx.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    tx.stop();
    tx.join();
    rx.join();
    CHECK(tx.error() == "");
    CHECK(rx.error() == "");
    CHECK_FALSE(rx.verify_failed());
    CHECK(rx.received_bytes().at(0) == tx.sent_bytes());
    CHECK(tx.sent_bytes() > size);  // more than one message went through
}

TEST_CASE("staged TCP: latency round trips through staged memory on either side") {
    auto spec = fixed_spec(200, true);
    for (int mix = 0; mix < 3; ++mix) {  // both staged, staged ping + host echo, host ping + staged echo
        for (std::uint64_t size : {8ull, 5000ull, 200'000ull}) {
            CAPTURE(mix);
            CAPTURE(size);
            auto [left, right] = test::loopback_tcp_pairs(1);
            point_side ping(spec, core::test_kind::latency, size, std::move(left), {stream_role::ping}, 0,
                            mix == 2 ? staged_stream_factory{} : host_staging(spec));
            point_side echo(spec, core::test_kind::latency, size, std::move(right), {stream_role::echo}, 0,
                            mix == 1 ? staged_stream_factory{} : host_staging(spec));
            echo.start();
            ping.start();
            ping.join();
            echo.join();
            CHECK(ping.error() == "");
            CHECK(echo.error() == "");
            CHECK(ping.latency().code == 0);
            CHECK(ping.latency().rtt_ns.count == 200);
            CHECK(ping.latency().rtt_ns.min > 0);
        }
    }
}

}  // namespace tcp_staged_stream_test
