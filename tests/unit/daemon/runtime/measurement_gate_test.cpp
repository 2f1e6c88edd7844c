// daemon/measurement_gate: one holder at a time; the lease frees the gate however it ends
// (release, destruction, after being moved to another owner or thread), and only once.
#include "daemon/runtime/measurement_gate.hpp"

#include <doctest/doctest.h>
#include <thread>

namespace measurement_gate_test {  // one per test file: the unit tests are built in batches (unity build)

namespace md = meshperf::daemon;

TEST_CASE("measurement gate: a second taker is refused with the holder's name") {
    md::measurement_gate gate;
    std::string holder;
    auto first = gate.try_acquire("run r-1", holder);
    REQUIRE(first);
    CHECK(gate.holder() == "run r-1");
    auto second = gate.try_acquire("session from 10.0.0.2", holder);
    CHECK_FALSE(second);
    CHECK(holder == "run r-1");
    CHECK(gate.holder() == "run r-1");  // the refused taker changed nothing
}

TEST_CASE("measurement gate: destroying or releasing the lease frees the gate, once") {
    md::measurement_gate gate;
    std::string holder;
    {
        auto lease = gate.try_acquire("run r-1", holder);
        REQUIRE(lease);
    }
    CHECK(gate.holder().empty());
    auto lease = gate.try_acquire("run r-2", holder);
    REQUIRE(lease);
    lease.release();
    CHECK_FALSE(lease);
    CHECK(gate.holder().empty());
    auto other = gate.try_acquire("run r-3", holder);
    REQUIRE(other);
    lease.release();  // an empty lease frees nothing: r-3 keeps the gate
    CHECK(gate.holder() == "run r-3");
}

TEST_CASE("measurement gate: a moved lease holds the gate in its new owner only") {
    md::measurement_gate gate;
    std::string holder;
    auto lease = gate.try_acquire("session from 10.0.0.2", holder);
    REQUIRE(lease);
    md::measurement_gate::lease moved = std::move(lease);
    CHECK_FALSE(lease);
    CHECK(moved);
    { auto gone = std::move(lease); }  // destroying the moved-from lease frees nothing
    CHECK(gate.holder() == "session from 10.0.0.2");

    std::thread session([l = std::move(moved)]() mutable { l.release(); });
    session.join();
    CHECK(gate.holder().empty());

    // Move-assigning over a held lease frees what it held before.
    auto a = gate.try_acquire("a", holder);
    REQUIRE(a);
    md::measurement_gate::lease b;
    b = std::move(a);
    CHECK(gate.holder() == "a");
    b = md::measurement_gate::lease{};
    CHECK(gate.holder().empty());
}

}  // namespace measurement_gate_test
