// transport/tcp/point_side with host memory over loopback TCP, both sides in one process:
// what a point says it verified (verified_bytes), and the corrupting test hook
// (corrupt_sent_for_test, behind MESHPERF_TEST_CORRUPT_TCP) caught by the receiving end's
// --verify on every host path: bandwidth (one way and each way) and latency.
#include "core/run_spec.hpp"
#include "transport/socket.hpp"
#include "transport/tcp/point_side.hpp"
#include "tests/unit/transport/tcp/loopback_pairs.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>

namespace point_side_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::transport::tcp;
using transport::socket_fd;

namespace {


core::run_spec fixed_spec(std::uint64_t iterations, bool verify) {
    core::run_spec s;
    s.iterations = iterations;
    s.verify = verify;
    s.streams = 1;
    return s;
}

struct outcome {
    std::string initiator_error, peer_error;
    bool initiator_verify_failed = false, peer_verify_failed = false;
    std::uint64_t initiator_verified = 0, peer_verified = 0;
};

// One fixed-count point of `test`; `corrupt_initiator`: the initiator's sent messages carry a flipped byte.
outcome point(core::test_kind test, std::uint64_t size, bool verify, bool corrupt_initiator) {
    const auto spec = fixed_spec(test == core::test_kind::latency ? 50 : 20, verify);
    const auto roles = initiator_roles(test, 1, false);
    auto [left, right] = test::loopback_tcp_pairs(roles.size());
    std::vector<stream_role> mirrored;
    for (auto r : roles) mirrored.push_back(mirror(r));
    point_side ini(spec, test, size, std::move(left), roles);
    point_side peer(spec, test, size, std::move(right), mirrored);
    if (corrupt_initiator) ini.corrupt_sent_for_test();
    peer.start();
    ini.start();
    peer.join();
    if (!peer.error().empty()) ini.abort();  // the peer gave up: end this side as the session would
    ini.join();
    return {ini.error(), peer.error(), ini.verify_failed(), peer.verify_failed(), ini.verified_bytes(), peer.verified_bytes()};
}

}  // namespace

TEST_CASE("TCP point: verified_bytes counts what each end checked, and nothing without --verify") {
    const std::uint64_t size = 10'000;
    auto o = point(core::test_kind::bandwidth, size, true, false);
    CHECK(o.peer_error == "");
    CHECK(o.initiator_verified == 0);  // it only sent
    CHECK(o.peer_verified == (warm_messages(size) + 20) * size);
    o = point(core::test_kind::bidir, size, true, false);
    CHECK(o.initiator_verified == (warm_messages(size) + 20) * size);
    CHECK(o.peer_verified == (warm_messages(size) + 20) * size);
    o = point(core::test_kind::latency, 100, true, false);
    CHECK(o.initiator_error == "");
    CHECK(o.initiator_verified > 0);  // every echo it got back
    CHECK(o.initiator_verified % 100 == 0);
    CHECK(o.peer_verified == o.initiator_verified);  // the echo side checked the same messages
    for (auto t : {core::test_kind::bandwidth, core::test_kind::bidir, core::test_kind::latency}) {
        o = point(t, 100, false, false);
        CHECK(o.initiator_verified + o.peer_verified == 0);
    }
}

TEST_CASE("TCP point: the corrupting hook is caught by the receiving end's --verify on every host path") {
    for (auto t : {core::test_kind::bandwidth, core::test_kind::bidir, core::test_kind::latency}) {
        CAPTURE(static_cast<int>(t));
        auto o = point(t, 4096, true, true);
        CHECK(o.peer_verify_failed);  // the peer receives (bandwidth, bidir) or echoes (latency) the bad bytes
        CHECK(o.peer_error.find("data corrupted") != std::string::npos);
        CHECK_FALSE(o.initiator_verify_failed);
        o = point(t, 4096, false, true);  // the same bytes unchecked pass: the check is what catches them
        CHECK(o.peer_error == "");
        CHECK_FALSE(o.peer_verify_failed);
    }
}

}  // namespace point_side_test
