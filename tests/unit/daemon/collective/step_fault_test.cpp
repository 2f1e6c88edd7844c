// daemon/collective/step_fault: a step's status (transport/step_io.hpp) becomes the
// collective_fault the daemon has always reported, word for word, blaming the peer where the
// failure is its, or run_cancelled.
#include "daemon/collective/step_fault.hpp"
#include "daemon/session/session_protocol.hpp"

#include <cerrno>
#include <doctest/doctest.h>

namespace step_fault_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using transport::mesh::step_end;
using transport::mesh::step_status;

daemon::collective_fault fault_of(const step_status& st, const daemon::step_label& label) {
    try {
        daemon::throw_step_fault(st, label, std::chrono::milliseconds(5000));
    } catch (const daemon::collective_fault& f) {
        return f;
    }
    FAIL("no collective_fault");
    return daemon::collective_fault("", std::nullopt);
}

TEST_CASE("a status is said as before, with the step and the peer") {
    const daemon::step_label it{"iteration", 4, "step", 7, 10};
    step_status st;
    st.end = step_end::peer_closed;
    st.peer = 3;
    auto f = fault_of(st, it);
    CHECK(std::string(f.what()) ==
          "iteration 4, step 7 of 10: rank 3 closed its connection (its daemon stopped, or gave up on the run)");
    CHECK(f.peer == 3u);

    st.end = step_end::stalled_receiving;
    f = fault_of(st, daemon::step_label{"verification", 0, "barrier round", 2});
    CHECK(std::string(f.what()) ==
          "verification, barrier round 2: nothing from rank 3 for 5 s (its daemon is stalled or the link is down)");

    st.end = step_end::send_failed;
    st.error = ECONNRESET;
    f = fault_of(st, it);
    CHECK(std::string(f.what()) == "iteration 4, step 7 of 10: sending to rank 3 failed: Connection reset by peer (its daemon "
                                   "died or the link was cut)");

    st = {};
    st.end = step_end::device_failed;
    st.doing = "taking a piece from its receive slot";
    st.detail = "boom";
    f = fault_of(st, it);
    CHECK(std::string(f.what()) == "iteration 4, step 7 of 10: device memory failed while taking a piece from its receive slot: boom");
    CHECK(!f.peer);
}

TEST_CASE("a cancelled step is run_cancelled") {
    step_status st;
    st.end = step_end::cancelled;
    CHECK_THROWS_AS(daemon::throw_step_fault(st, daemon::step_label{"iteration", 1}, std::chrono::milliseconds(5000)),
                    daemon::run_cancelled);
}

}  // namespace step_fault_test
