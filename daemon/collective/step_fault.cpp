#include "daemon/collective/step_fault.hpp"

#include "daemon/session/session_protocol.hpp"

#include <cstring>
#include <fmt/format.h>

namespace meshperf::daemon {

using transport::mesh::step_end;

std::string step_label::text() const {
    auto out = iteration ? fmt::format("{} {}", phase, iteration) : std::string(phase);
    out += count ? fmt::format(", {} {} of {}", part, index, count) : fmt::format(", {} {}", part, index);
    return out;
}

void throw_step_fault(const transport::mesh::step_status& st, const step_label& label, std::chrono::milliseconds limit) {
    const unsigned q = st.peer;
    switch (st.end) {
    case step_end::ok:
    case step_end::cancelled:
        throw run_cancelled();
    case step_end::stalled_receiving:
        throw collective_fault(fmt::format("{}: nothing from rank {} for {} s (its daemon is stalled or the link is down)",
                                           label.text(), q, limit.count() / 1000.0),
                               q);
    case step_end::stalled_sending:
        throw collective_fault(fmt::format("{}: rank {} took nothing of what this rank sends for {} s (its daemon is "
                                           "stalled or the link is down)",
                                           label.text(), q, limit.count() / 1000.0),
                               q);
    case step_end::stalled:
        throw collective_fault(label.text() + ": stalled", {});
    case step_end::peer_closed:
        throw collective_fault(
            fmt::format("{}: rank {} closed its connection (its daemon stopped, or gave up on the run)", label.text(), q), q);
    case step_end::send_failed:
        throw collective_fault(fmt::format("{}: sending to rank {} failed: {} (its daemon died or the link was cut)",
                                           label.text(), q, std::strerror(st.error)),
                               q);
    case step_end::recv_failed:
        throw collective_fault(fmt::format("{}: receiving from rank {} failed: {} (its daemon died or the link was cut)",
                                           label.text(), q, std::strerror(st.error)),
                               q);
    case step_end::poll_failed:
        throw collective_fault(fmt::format("{}: poll failed: {}", label.text(), std::strerror(st.error)), {});
    case step_end::rcvlowat_failed:
        throw collective_fault(
            fmt::format("cannot set SO_RCVLOWAT on the connection to rank {}: {}", q, std::strerror(st.error)), std::nullopt);
    case step_end::link_failed:
        throw collective_fault(fmt::format("{}: the RDMA link to rank {} failed: {} (its daemon died or gave up on the run, "
                                           "or the link was cut)",
                                           label.text(), q, st.detail),
                               q);
    case step_end::bad_piece:
        throw collective_fault(fmt::format("{}: rank {} sent a piece of {} bytes where this step expects {} more (the two "
                                           "daemons run different plans: check their versions)",
                                           label.text(), q, st.got, st.expected),
                               q);
    case step_end::device_failed:
        throw collective_fault(
            fmt::format("{}: device memory failed while {}: {}", label.text(), st.doing ? st.doing : "?", st.detail),
            std::nullopt);
    }
    throw collective_fault(label.text() + ": stalled", {});
}

}  // namespace meshperf::daemon
