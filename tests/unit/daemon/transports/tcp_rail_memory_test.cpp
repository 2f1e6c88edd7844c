// daemon::side_stream_memory: over rails each TCP stream's messages live in its rail's
// memory (--memory cuda:auto resolved into the rails by the CLI), at both ends, also when a
// point runs without a rail dropped after failing. The GPU factories are stand-ins that
// record which domain made which stream: on a GPU they are daemon::tcp_stream_memory.
#include "daemon/sweep/rail_failures.hpp"
#include "daemon/transports/tcp/tcp_rail_memory.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

namespace tcp_rail_memory_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace tcp = transport::tcp;

namespace {

struct made_stream {
    std::string domain;
    tcp::stream_role role;
    std::size_t stream;
};

/// A domain factory that records each stream it is asked for (and makes none: host memory).
struct recorder {
    std::vector<std::string> domains_opened;
    std::vector<made_stream> streams;
    daemon::side_stream_memory::domain_factory maker() {
        return [this](const std::string& domain, const core::run_spec&) -> tcp::staged_stream_factory {
            domains_opened.push_back(domain);
            return [this, domain](tcp::stream_role role, std::size_t, std::size_t i) -> std::unique_ptr<tcp::staged_stream> {
                streams.push_back({domain, role, i});
                return nullptr;
            };
        };
    }
};

core::run_spec two_rails(core::test_kind test) {
    core::run_spec s;
    s.tests = {test};
    s.streams = 2;
    s.local_memory = s.remote_memory = "cuda:auto";
    s.rails.push_back({"ra0", "rb0", "10.0.0.1", "10.0.0.2", 100, "cuda:3", "cuda:1"});
    s.rails.push_back({"ra1", "rb1", "10.0.1.1", "10.0.1.2", 100, "cuda:5", "cuda:0"});
    return s;
}

/// Makes every stream of one point through the side's factory; the domains in stream order.
std::vector<std::string> domains_of_point(const daemon::side_stream_memory& m, const core::run_spec& point, core::test_kind test,
                                          bool initiator, recorder& rec) {
    auto roles = tcp::initiator_roles(test, core::streams_per_direction(point, test), point.reverse);
    if (!initiator)
        for (auto& r : roles) r = tcp::mirror(r);
    rec.streams.clear();
    const auto f = m.for_point(point, roles);
    REQUIRE(f);
    for (std::size_t i = 0; i < roles.size(); ++i) CHECK(f(roles[i], 4096, i) == nullptr);
    std::vector<std::string> out;
    for (const auto& s : rec.streams) out.push_back(s.domain);
    return out;
}

}  // namespace

TEST_SUITE("tcp_rail_memory") {

TEST_CASE("each rail's streams are made on its own GPU, at the initiator and at the peer") {
    const auto run = two_rails(core::test_kind::bandwidth);
    recorder at_initiator, at_peer;
    const daemon::side_stream_memory initiator(run, true, at_initiator.maker()), peer(run, false, at_peer.maker());
    CHECK(at_initiator.domains_opened == std::vector<std::string>{"cuda:3", "cuda:5"});
    CHECK(at_peer.domains_opened == std::vector<std::string>{"cuda:1", "cuda:0"});
    // Bandwidth: two sending streams per rail, rail-major.
    CHECK(domains_of_point(initiator, run, core::test_kind::bandwidth, true, at_initiator) ==
          std::vector<std::string>{"cuda:3", "cuda:3", "cuda:5", "cuda:5"});
    CHECK(domains_of_point(peer, run, core::test_kind::bandwidth, false, at_peer) ==
          std::vector<std::string>{"cuda:1", "cuda:1", "cuda:0", "cuda:0"});
}

TEST_CASE("bidir: each direction's streams follow their rail") {
    const auto run = two_rails(core::test_kind::bidir);
    recorder rec;
    const daemon::side_stream_memory m(run, true, rec.maker());
    const auto roles = tcp::initiator_roles(core::test_kind::bidir, core::streams_per_direction(run, core::test_kind::bidir), false);
    const auto domains = domains_of_point(m, run, core::test_kind::bidir, true, rec);
    REQUIRE(domains.size() == roles.size());
    std::size_t sends = 0, receives = 0;
    for (std::size_t i = 0; i < roles.size(); ++i) {
        auto& n = roles[i] == tcp::stream_role::send ? sends : receives;
        CHECK(domains[i] == (n < 2 ? "cuda:3" : "cuda:5"));  // streams 0, 1 of each role: ra0
        ++n;
    }
    CHECK(sends == 4);
    CHECK(receives == 4);
}

TEST_CASE("a point without a dropped rail gives every stream the remaining rail's GPU") {
    const auto run = two_rails(core::test_kind::bandwidth);
    recorder rec;
    const daemon::side_stream_memory m(run, true, rec.maker());
    const auto point = daemon::point_rails::point_spec(run, {{"ra0", "its link went down"}});
    REQUIRE(point.rails.size() == 1);
    CHECK(domains_of_point(m, point, core::test_kind::bandwidth, true, rec) == std::vector<std::string>{"cuda:5", "cuda:5"});
}

TEST_CASE("one GPU for two rails is opened once; host rails and host runs make no staged streams") {
    auto run = two_rails(core::test_kind::bandwidth);
    run.rails[1].local_memory = "cuda:3";
    run.rails[0].peer_memory = "host";
    recorder rec;
    const daemon::side_stream_memory shared(run, true, rec.maker());
    CHECK(rec.domains_opened == std::vector<std::string>{"cuda:3"});
    recorder at_peer;
    const daemon::side_stream_memory peer(run, false, at_peer.maker());
    CHECK(at_peer.domains_opened == std::vector<std::string>{"cuda:0"});
    // rb0's streams are in host memory: the factory is not asked for them.
    CHECK(domains_of_point(peer, run, core::test_kind::bandwidth, false, at_peer) == std::vector<std::string>{"cuda:0", "cuda:0"});

    core::run_spec host;
    host.tests = {core::test_kind::bandwidth};
    recorder none;
    const daemon::side_stream_memory h(host, true, none.maker());
    CHECK(none.domains_opened.empty());
    CHECK_FALSE(h.for_point(host, tcp::initiator_roles(core::test_kind::bandwidth, 1, false)));
    CHECK(daemon::side_memory_notes(host, true, "eth0").empty());
}

}  // TEST_SUITE

}  // namespace tcp_rail_memory_test
