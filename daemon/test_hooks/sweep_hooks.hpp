#pragma once
/// What a test may ask of a daemon's sweep points, from the daemon's environment
/// (daemon/main.cpp); all off in service.

namespace meshperf::daemon {

struct sweep_test_hooks {
    /// MESHPERF_TEST_CORRUPT_TCP=1: every message this daemon's host-memory TCP send and
    /// ping streams send carries one flipped byte (transport::tcp::point_side::
    /// corrupt_sent_for_test), so the receiving end's --verify must fail the point.
    bool corrupt_tcp = false;
};

}  // namespace meshperf::daemon
