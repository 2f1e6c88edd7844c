// Telling a run's peer from the initiating daemon itself (daemon/runtime/self_peer.hpp).
#include "daemon/runtime/context.hpp"
#include "daemon/runtime/self_peer.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace self_peer_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::daemon::listening_socket;
using meshperf::daemon::new_instance_id;
using meshperf::daemon::reaches_listening_socket;
using meshperf::daemon::same_daemon_refusal;
using meshperf::transport::parse_endpoint;

TEST_SUITE("self_peer") {

TEST_CASE("a socket bound to one address is reached by that address and port only") {
    const listening_socket own{"127.0.0.1", 7470};
    const std::vector<std::string> local{"127.0.0.1", "10.0.0.5", "::1"};
    CHECK(reaches_listening_socket({"127.0.0.1"}, 7470, own, local));
    CHECK(reaches_listening_socket({"::ffff:127.0.0.1"}, 7470, own, local));  // v4-mapped
    CHECK_FALSE(reaches_listening_socket({"127.0.0.1"}, 7471, own, local));
    CHECK_FALSE(reaches_listening_socket({"127.0.0.2"}, 7470, own, local));
    CHECK_FALSE(reaches_listening_socket({"10.0.0.5"}, 7470, own, local));  // another address of this host
    CHECK_FALSE(reaches_listening_socket({"::1"}, 7470, own, local));
    CHECK(reaches_listening_socket({"::1", "127.0.0.1"}, 7470, own, local));  // any of a name's addresses
}

TEST_CASE("a socket bound to every address is reached by any address of this host") {
    const std::vector<std::string> local{"127.0.0.1", "10.0.0.5", "fd00::5", "::1"};
    const listening_socket any4{"0.0.0.0", 7470};
    CHECK(reaches_listening_socket({"10.0.0.5"}, 7470, any4, local));
    CHECK(reaches_listening_socket({"127.0.0.1"}, 7470, any4, local));
    CHECK(reaches_listening_socket({"127.8.9.10"}, 7470, any4, local));  // all of 127/8 is loopback
    CHECK(reaches_listening_socket({"0.0.0.0"}, 7470, any4, local));
    CHECK_FALSE(reaches_listening_socket({"10.0.0.6"}, 7470, any4, local));  // another host
    CHECK_FALSE(reaches_listening_socket({"fd00::5"}, 7470, any4, local));  // 0.0.0.0 takes IPv4 only
    CHECK_FALSE(reaches_listening_socket({"10.0.0.5"}, 7000, any4, local));
    const listening_socket any6{"::", 7470};
    CHECK(reaches_listening_socket({"fd00::5"}, 7470, any6, local));
    CHECK(reaches_listening_socket({"::1"}, 7470, any6, local));
    CHECK(reaches_listening_socket({"10.0.0.5"}, 7470, any6, local));  // dual stack
    CHECK_FALSE(reaches_listening_socket({"fd00::6"}, 7470, any6, local));
}

TEST_CASE("nothing is this daemon when its socket is unknown or a peer address is not an IP") {
    CHECK_FALSE(reaches_listening_socket({"127.0.0.1"}, 7470, listening_socket{}, {"127.0.0.1"}));
    CHECK_FALSE(reaches_listening_socket({"node7"}, 7470, listening_socket{"0.0.0.0", 7470}, {}));
    CHECK_FALSE(reaches_listening_socket({}, 7470, listening_socket{"0.0.0.0", 7470}, {}));
}

TEST_CASE("same_daemon_refusal: literals and localhost name this daemon, other ports and names do not") {
    const listening_socket own{"127.0.0.1", 17470};
    const auto why = same_daemon_refusal(parse_endpoint("127.0.0.1:17470"), own);
    REQUIRE(why);
    CHECK(why->find("initiator and peer are the same daemon") != std::string::npos);
    CHECK(why->find("127.0.0.1:17470") != std::string::npos);
    CHECK(same_daemon_refusal(parse_endpoint("localhost:17470"), own));
    CHECK(same_daemon_refusal(parse_endpoint("LOCALHOST:17470"), own));
    CHECK_FALSE(same_daemon_refusal(parse_endpoint("localhost:17471"), own));
    CHECK_FALSE(same_daemon_refusal(parse_endpoint("127.0.0.2:17470"), own));
    // A name no name server is asked about: left to the session's instance-id check.
    CHECK_FALSE(same_daemon_refusal(parse_endpoint("node-that-does-not-exist.invalid:17470"), own));
    // A wildcard socket: this host's loopback reaches it.
    CHECK(same_daemon_refusal(parse_endpoint("127.0.0.1:17470"), listening_socket{"0.0.0.0", 17470}));
    CHECK(same_daemon_refusal(parse_endpoint("[::1]:17470"), listening_socket{"::", 17470}));
}

TEST_CASE("instance ids: 32 hex digits, one per daemon") {
    const auto a = new_instance_id();
    CHECK(a.size() == 32);
    CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
    meshperf::daemon::daemon_context one, two;
    CHECK(one.instance_id.size() == 32);
    CHECK(one.instance_id != two.instance_id);
}

}

}  // namespace self_peer_test
