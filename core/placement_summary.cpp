#include "core/placement_summary.hpp"

#include "core/transport_rules.hpp"

#include "core/sizes.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::core {

namespace {

/// The distinct placements among one test kind's points, in order of first use, each with
/// the sizes measured under it.
struct placement_group {
    point_placement placement;
    std::vector<std::uint64_t> sizes;
};

std::vector<placement_group> groups_of(const run_result& run, test_kind test) {
    std::vector<placement_group> groups;
    for (const auto& p : run.points) {
        if (p.test != test || !p.placement) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.placement == *p.placement; });
        if (it == groups.end()) groups.push_back({*p.placement, {p.size_bytes}});
        else it->sizes.push_back(p.size_bytes);
    }
    return groups;
}

std::string abbreviated_sizes(const std::vector<std::uint64_t>& sizes) {
    constexpr std::size_t shown = 6;
    std::string out;
    for (std::size_t i = 0; i < sizes.size() && i < shown; ++i) out += (i ? ", " : "") + format_size(sizes[i]);
    if (sizes.size() > shown) out += fmt::format(" and {} more", sizes.size() - shown);
    return out;
}

std::string shared_cpus(const point_placement& p) {
    std::vector<int> both;
    for (int c : p.initiator.cpus)
        if (p.peer && std::find(p.peer->cpus.begin(), p.peer->cpus.end(), c) != p.peer->cpus.end()) both.push_back(c);
    return fmt::format("CPU{} {}", both.size() == 1 ? "" : "s", format_cpu_list(both));
}

}  // namespace

std::vector<std::string> placement_warnings(const run_result& run) {
    std::vector<std::string> out;
    for (auto test : run.spec.tests) {
        const auto groups = groups_of(run, test);
        if (groups.size() < 2) continue;
        constexpr std::size_t shown = 4;
        std::string where;
        for (std::size_t i = 0; i < groups.size() && i < shown; ++i)
            where += fmt::format("{}{} at {}", i ? "; " : "", describe(groups[i].placement), abbreviated_sizes(groups[i].sizes));
        if (groups.size() > shown) where += fmt::format("; and {} more placements", groups.size() - shown);
        out.push_back(fmt::format("thread placement changed within the {} sweep ({}): points measured on other CPUs are not "
                                  "comparable; pin the threads with --cpu A,B",
                                  to_string(test), where));
    }
    const bool spinning = run.spec.busy_poll || transport_rules_of(run.spec.transport).polls;
    if (spinning) {
        std::vector<std::uint64_t> sizes;
        const point_placement* first = nullptr;
        for (const auto& p : run.points)
            if (p.test == test_kind::latency && p.placement && p.placement->shared_cpu.value_or(false)) {
                sizes.push_back(p.size_bytes);
                if (!first) first = &*p.placement;
            }
        if (first)
            out.push_back(fmt::format(
                "{} with both sides on {} of one host (latency at {}): two spinning threads time-share that CPU, so these "
                "latencies measure the scheduler's time slice, not the path; pin the sides apart (--cpu A,B){}",
                run.spec.busy_poll ? "busy-poll" : "RDMA latency (the loops poll completions)", shared_cpus(*first),
                abbreviated_sizes(sizes), run.spec.busy_poll ? " or drop --busy-poll" : ""));
    }
    return out;
}

std::vector<std::string> placement_lines(const run_result& run) {
    struct kind_line {
        test_kind test;
        point_placement first;
        bool varied;
    };
    std::vector<kind_line> kinds;
    for (auto test : run.spec.tests) {
        const auto groups = groups_of(run, test);
        if (!groups.empty()) kinds.push_back({test, groups.front().placement, groups.size() > 1});
    }
    if (kinds.empty()) return {};
    const bool uniform = std::all_of(kinds.begin(), kinds.end(),
                                     [&](const auto& k) { return !k.varied && k.first == kinds.front().first; });
    if (uniform) return {"placement: " + describe(kinds.front().first)};
    std::vector<std::string> out;
    for (const auto& k : kinds)
        out.push_back(fmt::format("placement ({}): {}{}", to_string(k.test), describe(k.first),
                                  k.varied ? " at first; it changed within the sweep (see warnings)" : ""));
    return out;
}

}  // namespace meshperf::core
