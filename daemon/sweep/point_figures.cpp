#include "daemon/sweep/point_figures.hpp"

#include "core/sizes.hpp"
#include "core/transport_rules.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

core::summary halved(core::summary s) {
    s.min /= 2; s.p50 /= 2; s.p90 /= 2; s.p99 /= 2; s.p999 /= 2; s.max /= 2; s.mean /= 2; s.stdev /= 2;
    return s;
}

double percent(double cpu_s, double wall_s) { return wall_s > 0 ? cpu_s / wall_s * 100.0 : 0.0; }

}  // namespace

bool flows_precise_enough(const std::vector<tracked_flow>& flows, double precision) {
    return std::all_of(flows.begin(), flows.end(), [&](const tracked_flow& f) {
        return core::target_met(f.tracker->precision(), precision);
    });
}

bool may_stop_at_cap(const std::vector<tracked_flow>& flows, double elapsed_s, double cap_s) {
    if (elapsed_s < cap_s) return false;
    if (elapsed_s >= cap_s + core::first_bytes_grace_s) return true;
    return std::all_of(flows.begin(), flows.end(), [](const tracked_flow& f) { return f.tracker->has_bytes(); });
}

core::point_result assemble_point(const point_inputs& in) {
    core::point_result p;
    p.test = in.test;
    p.size_bytes = in.size;
    p.precision.adaptive = in.spec.adaptive();
    p.precision.target = in.spec.precision;
    p.cpu.local_percent = percent(in.local_cpu_s, in.local_wall_s);
    p.cpu.remote_percent = percent(in.peer_cpu_s, in.peer_wall_s);
    // What was checked, not what was asked: --verify with nothing compared reads unverified.
    if (in.spec.verify) {
        p.verified_bytes = in.verified_here + in.verified_at_peer;
        p.verified = p.verified_bytes > 0;
        if (p.verified)
            p.verified_by = in.verified_here && in.verified_at_peer ? "both" : in.verified_here ? "initiator" : "peer";
    }

    if (in.test == core::test_kind::latency) {
        p.rtt_ns = in.latency->rtt_ns;
        p.lat_ns = halved(in.latency->rtt_ns);
        p.precision = in.latency->precision;
        p.duration_s = in.latency->measured_s;
    } else if (!in.fixed_flows.empty()) {
        p.flows = in.fixed_flows;
    } else {
        // The point reports its least precise flow, with that flow's view and blocks.
        const tracked_flow* worst = nullptr;
        core::interval_choice worst_choice;
        bool all_met = true;
        std::uint64_t batches = ~0ull;
        for (const auto& f : in.tracked_flows) {
            if (f.tracker->window_empty()) {
                // No byte in the window at the cap: the figure of the whole point, said so,
                // rather than a point that runs on past its announced time.
                p.flows.push_back(f.tracker->whole_point_figures(f.direction, in.size));
                p.warnings.push_back(fmt::format(
                    "{}: no bytes arrived in the measured window after the warm-up: the figure is over the whole point, "
                    "warm-up included ({} bytes in {:.3g} s); the path is far slower than the time cap can measure "
                    "(raise --max-time or --duration to measure it)",
                    f.direction, p.flows.back().bytes, p.flows.back().seconds));
            } else {
                p.flows.push_back(f.tracker->figures(f.direction, in.size));
            }
            const auto c = f.tracker->precision();
            if (!worst || !(c.relative_half_width <= worst_choice.relative_half_width)) {
                worst = &f;
                worst_choice = c;
            }
            all_met = all_met && core::target_met(c, in.spec.precision);
            batches = std::min<std::uint64_t>(batches, f.tracker->intervals());
        }
        if (worst) {
            p.precision.record(worst_choice);
            p.precision.block_values = worst->tracker->block_gbit_per_s();
        }
        p.precision.met = p.precision.adaptive && all_met;
        p.precision.batches = batches;
    }
    for (const auto& f : p.flows) {
        p.gbit_per_s += f.gbit_per_s;
        p.msg_per_s += f.msg_per_s;
        p.duration_s = std::max(p.duration_s, f.seconds);
    }
    if (!in.spec.rails.empty() && in.test != core::test_kind::latency) {
        std::vector<std::vector<double>> stream_rates;
        for (const auto& f : p.flows) stream_rates.push_back(f.stream_gbit_per_s);
        p.rails = core::split_by_rail(stream_rates, in.spec.rails, in.spec.streams);
        core::mark_failed_rails(p.rails, in.failed_rails);
        if (in.run_rails) p.rails = core::with_dropped_rails(std::move(p.rails), *in.run_rails, in.dropped_rails, p.flows.size());
        for (auto& w : core::rail_warnings(p.rails, in.spec.rails)) p.warnings.push_back(std::move(w));
    }
    if (in.byte_cap_reached)
        p.warnings.push_back(fmt::format("stopped at the byte limit: {} per direction per point (max_bytes_per_point, the lower "
                                         "of the two daemons' limits) was reached after {:.3g} s; the figures are the bytes and "
                                         "time measured up to then",
                                         core::format_size(in.byte_cap_reached), p.duration_s));
    if (p.precision.adaptive && !p.precision.met) {
        const auto why = in.byte_cap_reached ? std::string("when the byte limit was reached")
                                             : fmt::format("when its time cap of {:g} s (--max-time) was reached, after "
                                                           "{:.3g} s measured",
                                                           in.spec.max_point_s, p.duration_s);
        std::string detail;
        if (p.precision.method == core::precision_method::blocks)
            detail = fmt::format("; this is the interval between {} blocks of consecutive samples, which disagree more than the "
                                 "samples within them suggest (within-sample half-width {:.2g}%)",
                                 p.precision.blocks, p.precision.samples_achieved * 100);
        else if (p.precision.method && p.precision.blocks < core::min_blocks_for_target)
            detail = fmt::format("; only {} block{} of consecutive samples, and at least {} are needed to check the variation "
                                 "between blocks",
                                 p.precision.blocks, p.precision.blocks == 1 ? "" : "s", core::min_blocks_for_target);
        p.warnings.push_back(fmt::format("precision target not met: 95% CI half-width {:.2g}% of the estimate (target {:.2g}%) {}{}",
                                         p.precision.achieved * 100, in.spec.precision * 100, why, detail));
    }
    // A transport whose loops spin on completions (RDMA, libfabric) uses its cores whatever
    // the path does: its CPU figure says nothing about being CPU-bound.
    if (in.test == core::test_kind::bandwidth && !core::transport_rules_of(in.spec.transport).polls) {
        const double sender_cpu = in.sender_is_local ? p.cpu.local_percent : p.cpu.remote_percent;
        const double per_stream = sender_cpu / core::streams_per_direction(in.spec, in.test);
        if (per_stream >= 90.0)
            p.warnings.push_back(fmt::format("sender CPU-bound ({:.0f}% of a core per stream): the figure may be limited by the sender's CPU, not the path",
                                             per_stream));
    }
    if (in.tcp_counters) {
        p.tcp_counters = in.tcp_counters;
        if (auto w = core::retransmit_warning(*in.tcp_counters)) p.warnings.push_back(std::move(*w));
    }
    core::check_sane(p);
    return p;
}

}  // namespace meshperf::daemon
