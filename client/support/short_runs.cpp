#include "client/support/short_runs.hpp"

#include "client/support/hosts_file.hpp"
#include "core/transport_rules.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

std::vector<core::run_spec> short_test_specs(const std::string& peer, const short_test_options& o,
                                             std::vector<std::uint64_t> latency_sizes,
                                             std::vector<std::uint64_t> bandwidth_sizes) {
    core::run_spec base;
    base.peer = peer;
    base.transport = std::string(core::transport_rules_of(o.transport).name);
    base.streams = o.streams;
    base.max_point_s = o.max_time;
    base.warmup_s = o.warmup;
    const auto tests = core::parse_test_list(o.tests.empty() ? "latency,bandwidth" : o.tests);
    std::vector<core::run_spec> specs;
    if (!o.sizes.empty()) {
        base.tests = tests;
        base.sizes = core::parse_size_list(o.sizes);
        specs.push_back(base);
    } else {
        if (latency_sizes.empty()) latency_sizes = {default_latency_size};
        if (bandwidth_sizes.empty()) bandwidth_sizes = {default_bandwidth_size};
        for (auto t : tests) {
            core::run_spec s = base;
            s.tests = {t};
            s.sizes = t == core::test_kind::latency ? latency_sizes : bandwidth_sizes;
            std::sort(s.sizes.begin(), s.sizes.end());
            s.sizes.erase(std::unique(s.sizes.begin(), s.sizes.end()), s.sizes.end());
            specs.push_back(s);
        }
    }
    for (const auto& s : specs) core::validate(s);
    return specs;
}

std::string size_order_note(const short_test_options& o) {
    if (o.sizes.empty()) return {};
    try {
        return core::size_order_note("--sizes", o.sizes, core::parse_size_list_as_written(o.sizes));
    } catch (const core::spec_error&) {
        return {};
    }
}

run_outcome run_to_completion(const daemon_client& initiator, const core::run_spec& spec,
                              const std::function<void(const json&)>& on_event) {
    run_outcome out;
    try {
        const auto doc = initiator.run_streaming(core::to_json(spec), [&](const json& ev) {
            if (on_event) on_event(ev);
        });
        out.run = core::run_result_from_json(doc);
        out.completed = out.run.state == core::run_state::completed;
        if (!out.completed)
            out.error = out.run.error.empty() ? fmt::format("run {} ended {}", out.run.id, out.run.state.text()) : out.run.error;
    } catch (const auth_refused&) {
        throw;  // one cause for every run: said once by the command
    } catch (const client_error& e) {
        out.error = e.what();
        // "cannot reach": nothing was answered. A stream lost midway means the daemon died
        // during the run: unreachable too, for what comes next.
        out.initiator_unreachable = e.code() == exit_unreachable;
    } catch (const std::exception& e) {
        out.error = fmt::format("{}: {}", initiator.address().to_string(), e.what());
    }
    return out;
}

link_figures summarize_link(const std::vector<core::run_result>& runs) {
    link_figures f;
    std::uint64_t lat_size = 0, bw_size = 0;
    bool bw_is_bidir = true;
    for (const auto& r : runs)
        for (const auto& p : r.points) {
            if (p.test == core::test_kind::latency && p.lat_ns && p.lat_ns->p50 > 0) {
                if (!f.lat_us || p.size_bytes < lat_size) {
                    f.lat_us = p.lat_ns->p50 / 1000.0;
                    lat_size = p.size_bytes;
                }
            } else if (p.test != core::test_kind::latency && p.gbit_per_s > 0) {
                const bool bidir = p.test == core::test_kind::bidir;
                // A unidirectional figure beats a bidirectional one; then the largest size.
                if (!f.gbit_per_s || (bw_is_bidir && !bidir) || (bidir == bw_is_bidir && p.size_bytes > bw_size)) {
                    f.gbit_per_s = p.gbit_per_s;
                    bw_size = p.size_bytes;
                    bw_is_bidir = bidir;
                }
            }
        }
    return f;
}

std::vector<std::string> read_host_list(const std::string& spec) {
    const auto hosts = read_host_words(spec);
    std::vector<std::string> normal;
    for (const auto& h : hosts) {
        std::string n;
        try {
            n = transport::parse_endpoint(h).to_string();
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, fmt::format("host '{}': {}", h, e.what()));
        }
        if (std::find(normal.begin(), normal.end(), n) != normal.end())
            throw client_error(exit_usage, fmt::format("host {} is listed twice", h));
        normal.push_back(n);
    }
    if (hosts.size() < 2)
        throw client_error(exit_usage, fmt::format("a matrix needs at least two hosts; got {} from '{}'", hosts.size(), spec));
    return hosts;
}

}  // namespace meshperf::client
