// Issue 47 item 10: every outbound connection of the daemon passes allowed_peer_cidrs
// (transport::connect_tcp asks the installed policy for each resolved address), and a run's
// rails cannot point its streams, and the token they carry, at an address of the request's
// choosing (daemon/sweep/rail_addresses.hpp).
#include "core/run_spec.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/sweep/rail_addresses.hpp"
#include "transport/connect_policy.hpp"
#include "transport/socket.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace connect_policy_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace std::chrono_literals;

/// A listening socket on 127.0.0.1 with a kernel-chosen port (connections complete in the
/// backlog; nothing accepts them).
struct listener {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    std::uint16_t port = 0;
    listener() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::listen(fd, 8) == 0);
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~listener() { ::close(fd); }
};

/// Restores "allow all" whatever a case does.
struct policy_reset {
    ~policy_reset() { transport::set_connect_policy({}); }
};

daemon::cidr_list allow(std::vector<std::string> cidrs) { return daemon::cidr_list(cidrs); }

TEST_SUITE("connect_policy") {

TEST_CASE("outgoing_refusal admits the allow-list only, and anything when it is empty") {
    const auto only_one = allow({"127.0.0.1/32"});
    CHECK_FALSE(daemon::outgoing_refusal(only_one, "127.0.0.1"));
    CHECK_FALSE(daemon::outgoing_refusal(only_one, "::ffff:127.0.0.1"));  // v4-mapped
    const auto why = daemon::outgoing_refusal(only_one, "127.0.0.5");
    REQUIRE(why);
    CHECK(why->find("127.0.0.5 is not in this daemon's allowed_peer_cidrs (127.0.0.1/32)") != std::string::npos);
    CHECK(daemon::outgoing_refusal(only_one, "not-an-ip"));
    CHECK_FALSE(daemon::outgoing_refusal(daemon::cidr_list{}, "203.0.113.9"));
}

TEST_CASE("connect_tcp asks the policy before connecting, and says why it refused") {
    policy_reset reset;
    listener l;
    CHECK_NOTHROW(transport::connect_tcp({"127.0.0.1", l.port}, 1000ms));
    daemon::daemon_context ctx;
    ctx.allowed_peers = allow({"127.0.0.2/32"});
    daemon::install_connect_policy(ctx);
    try {
        transport::connect_tcp({"127.0.0.1", l.port}, 1000ms);
        FAIL("connected past the allow-list");
    } catch (const std::system_error& e) {
        CHECK(e.code().value() == EACCES);
        CHECK(std::string(e.what()).find("127.0.0.1 is not in this daemon's allowed_peer_cidrs") != std::string::npos);
    }
    ctx.allowed_peers = allow({"127.0.0.1/32"});
    daemon::install_connect_policy(ctx);
    CHECK_NOTHROW(transport::connect_tcp({"127.0.0.1", l.port}, 1000ms));
    CHECK_NOTHROW(transport::connect_tcp({"localhost", l.port}, 1000ms));  // ::1 refused, 127.0.0.1 taken
}

TEST_CASE("a rail's addresses: the initiator's own, the peer's own, inside the allow-list") {
    CHECK(daemon::is_own_address("127.0.0.1"));
    CHECK(daemon::is_own_address("127.000.0.1") == false);  // not a literal inet_pton takes
    CHECK_FALSE(daemon::is_own_address("127.0.0.5"));      // routed to lo, but no interface holds it
    CHECK_FALSE(daemon::is_own_address("203.0.113.9"));
    CHECK_FALSE(daemon::is_own_address(""));

    core::run_spec spec;
    spec.rails.push_back({"lo", "lo", "127.0.0.1", "127.0.0.5"});
    CHECK_THROWS_WITH_AS(daemon::check_responder_rails(spec),
                         doctest::Contains("peer_address 127.0.0.5 is not an address of this peer's interfaces"),
                         daemon::session_error);
    daemon::daemon_context ctx;
    CHECK_NOTHROW(daemon::check_initiator_rails(ctx, spec));  // no allow-list: the peer's check decides
    ctx.allowed_peers = allow({"127.0.0.1/32"});
    CHECK_THROWS_WITH_AS(daemon::check_initiator_rails(ctx, spec),
                         doctest::Contains("rail lo: peer_address 127.0.0.5: address 127.0.0.5 is not in this daemon's allowed_peer_cidrs"),
                         daemon::session_error);
    spec.rails[0].peer_address = "127.0.0.1";
    CHECK_NOTHROW(daemon::check_initiator_rails(ctx, spec));
    CHECK_NOTHROW(daemon::check_responder_rails(spec));
    spec.rails[0].local_address = "203.0.113.9";
    CHECK_THROWS_WITH_AS(daemon::check_initiator_rails(ctx, spec),
                         doctest::Contains("local_address 203.0.113.9 is not an address of this host's interfaces"),
                         daemon::session_error);
}

}  // TEST_SUITE

}  // namespace connect_policy_test
