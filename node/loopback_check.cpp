#include "node/loopback_check.hpp"

#include <fmt/format.h>

namespace meshperf::node {

using core::check_state;

namespace {

/// `floor_gbit`: the manifest's floor; 0 when it has none (a manifest's floor is above 0).
finding judge(const transport::rnic_loopback_reading& l, double floor_gbit) {
    finding f{check_state::ok, "rnic_loopback", fmt::format("RDMA device {} port {}", l.device, l.port), ""};
    if (!l.gbit_per_s) {
        f.state = l.device_fault ? check_state::critical : check_state::unknown;
        f.message = l.device_fault ? fmt::format("loopback failed: {}", l.error)
                                   : fmt::format("loopback not measured: {}", l.error);
        return f;
    }
    const auto share = l.port_rate_gbit && *l.port_rate_gbit > 0
                           ? fmt::format(" ({:.0f}% of the port's {:g} Gbit/s)", 100 * *l.gbit_per_s / *l.port_rate_gbit,
                                         *l.port_rate_gbit)
                           : std::string();
    f.message = fmt::format("loopback {:.3g} Gbit/s{}: {} bytes in {:.2f} s, RDMA WRITE verified", *l.gbit_per_s, share,
                            l.bytes, l.seconds);
    if (*l.gbit_per_s < floor_gbit) {
        f.state = check_state::critical;
        f.message = fmt::format("loopback {:.3g} Gbit/s{}, below the manifest's floor of {:g} Gbit/s", *l.gbit_per_s, share,
                                floor_gbit);
    }
    return f;
}

}  // namespace

void add_loopback_findings(inspect_result& r, const transport::rnic_loopback_survey& survey,
                           const std::optional<node_manifest>& expect) {
    const double floor = expect && expect->loopback_floor_gbit ? *expect->loopback_floor_gbit : 0.0;
    if (survey.readings.empty())
        r.findings.push_back({check_state::unknown, "rnic_loopback", "RDMA devices",
                              fmt::format("no loopback measured: {}", survey.none_because)});
    for (const auto& l : survey.readings) {
        r.findings.push_back(judge(l, floor));
        r.loopback.push_back(l);
    }
    for (const auto& f : r.findings) r.state = core::worst(r.state, f.state);
}

}  // namespace meshperf::node
