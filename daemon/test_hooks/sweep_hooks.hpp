#pragma once
/// What a test may ask of a daemon's sweep points, from the daemon's environment
/// (daemon/main.cpp); all off in service.

namespace meshperf::daemon {

struct sweep_test_hooks {
    /// MESHPERF_TEST_CORRUPT_TCP=1: every message this daemon's host-memory TCP send and
    /// ping streams send carries one flipped byte (transport::tcp::point_side::
    /// corrupt_sent_for_test), so the receiving end's --verify must fail the point.
    bool corrupt_tcp = false;
    /// MESHPERF_TEST_CORRUPT_RDMA=1: every RDMA sweep point this daemon arms in host memory
    /// carries one flipped byte in what its QPs give the peer — the send region its WRITEs and
    /// SENDs go out from, and the region the peer's READs read (transport::rdma::point_params::
    /// corrupt_sent_for_test) — so the end that receives the data must fail the point under
    /// --verify. Read once when the daemon starts and applied when a point is armed, never in
    /// the per-message loops; GPU memory is left as it is (--verify is refused there).
    bool corrupt_rdma = false;
    /// MESHPERF_TEST_CORRUPT_OFI=1: every message this daemon's libfabric sweep loops send
    /// carries one flipped byte (transport::ofi::point_params::corrupt_sent_for_test, set
    /// when a point is armed), so the receiving end's --verify must fail the point.
    bool corrupt_ofi = false;
};

}  // namespace meshperf::daemon
