// transport/mesh/step_runner over the TCP data path (transport/tcp/mesh_steps): a step moves
// its messages and sums a reducing receive, and each way a step can fail ends it with a
// status naming the peer (closed, silent, no link) or cancelled, instead of throwing.
#include "core/collective/dtype.hpp"
#include "transport/mesh/step_runner.hpp"

#include <atomic>
#include <cstring>
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <thread>
#include <vector>

namespace mesh_step_runner_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace mesh = transport::mesh;

/// Ranks 0 and 1 of three, connected by a socket pair (rank 2 has no connection).
struct pair_mesh {
    mesh::connections a, b;
    pair_mesh() {
        a.fds.resize(3);
        b.fds.resize(3);
        int sv[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        a.fds[1].reset(sv[0]);
        b.fds[0].reset(sv[1]);
    }
};

TEST_CASE("a step moves its messages both ways and sums a reducing receive as elements arrive") {
    pair_mesh m;
    const std::atomic<bool> never{false};
    auto ra = mesh::make_tcp_step_runner(m.a, never, core::dtype::fp32);
    auto rb = mesh::make_tcp_step_runner(m.b, never, core::dtype::fp32);
    std::vector<float> out_a(1000, 1.0f), out_b(1000, 2.0f), acc(1000, 10.0f), scratch(1000, 0.0f), got(1000, 0.0f);
    auto bytes = [](std::vector<float>& v) { return reinterpret_cast<std::byte*>(v.data()); };
    const std::size_t n = 1000 * sizeof(float);
    REQUIRE(ra->with(2) == nullptr);  // no connection to rank 2
    ra->with(1)->send = {bytes(out_a), n, 0, nullptr, 0, {}};
    ra->with(1)->recv = {bytes(scratch), n, 0, bytes(acc), 0, {}};
    rb->with(0)->send = {bytes(out_b), n, 0, nullptr, 0, {}};
    rb->with(0)->recv = {bytes(got), n, 0, nullptr, 0, {}};
    mesh::step_status sb;
    std::thread t([&] { sb = rb->run(std::chrono::milliseconds(2000)); });
    const auto sa = ra->run(std::chrono::milliseconds(2000));
    t.join();
    CHECK(sa.ok());
    CHECK(sb.ok());
    CHECK(got[999] == 1.0f);
    CHECK(acc[0] == 12.0f);
    CHECK(acc[999] == 12.0f);
    REQUIRE(ra->completed().size() == 1);
    CHECK(ra->completed()[0].peer == 1);
    CHECK(ra->completed()[0].bytes == n);
}

TEST_CASE("a peer that closes ends the step with peer_closed naming it") {
    pair_mesh m;
    const std::atomic<bool> never{false};
    auto ra = mesh::make_tcp_step_runner(m.a, never, core::dtype::fp32);
    std::byte flag{};
    ra->with(1)->recv = {&flag, 1, 0, nullptr, 0, {}};
    m.b.close();
    const auto st = ra->run(std::chrono::milliseconds(2000));
    CHECK(st.end == mesh::step_end::peer_closed);
    CHECK(st.peer == 1);
}

TEST_CASE("a silent peer ends the step as stalled, blaming the peer it waits for") {
    pair_mesh m;
    const std::atomic<bool> never{false};
    auto ra = mesh::make_tcp_step_runner(m.a, never, core::dtype::fp32);
    std::byte flag{};
    ra->with(1)->recv = {&flag, 1, 0, nullptr, 0, {}};
    const auto st = ra->run(std::chrono::milliseconds(150));
    CHECK(st.end == mesh::step_end::stalled_receiving);
    CHECK(st.peer == 1);
}

TEST_CASE("a set cancel flag ends the step as cancelled") {
    pair_mesh m;
    const std::atomic<bool> cancel{true};
    auto ra = mesh::make_tcp_step_runner(m.a, cancel, core::dtype::fp32);
    std::byte flag{};
    ra->with(1)->recv = {&flag, 1, 0, nullptr, 0, {}};
    CHECK(ra->run(std::chrono::milliseconds(2000)).end == mesh::step_end::cancelled);
}

}  // namespace mesh_step_runner_test
