#include "core/rail_check.hpp"

#include "core/error.hpp"
#include "core/figure_text.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <map>
#include <utility>

namespace meshperf::core {

std::vector<figure_verdict> rail_verdicts(const run_result& run, double min_rate_fraction) {
    if (!(min_rate_fraction > 0 && min_rate_fraction <= 1))
        throw spec_error(fmt::format("--min-rate-fraction {} is out of range: give a fraction in (0, 1], e.g. 0.9 for 90% of the "
                                     "link rate",
                                     min_rate_fraction));
    std::vector<figure_verdict> out;
    for (const auto& p : run.points) {
        if (p.test == test_kind::latency) continue;
        const double directions = static_cast<double>(std::max<std::size_t>(1, p.flows.size()));
        for (const auto& r : p.rails) {
            figure_verdict v;
            v.figure = {figure_kind::bandwidth, p.size_bytes, r.gbit_per_s, r.name};
            if (r.failed) {
                v.state = check_state::critical;
                v.reason = "failed: " + r.error;
            } else if (!r.rate_gbit) {
                v.state = check_state::unknown;
                v.reason = "its link rate is unknown (neither end's /v1/info has one): give --expect node.toml with rail_rate_gbit";
            } else {
                const double floor = min_rate_fraction * *r.rate_gbit * directions;
                v.crit_at = floor;
                if (!(r.gbit_per_s > 0)) {
                    v.state = check_state::critical;
                    v.reason = "moved no bytes in the measured window (link down, or its route leaves by another interface)";
                } else if (r.gbit_per_s < floor) {
                    v.state = check_state::critical;
                    v.reason = fmt::format("below {} x link rate {}{} = {} Gbit/s ({:.0f}% of the link)", min_rate_fraction,
                                           message_figure(*r.rate_gbit), directions > 1 ? " x 2 directions" : "",
                                           message_figure(floor), 100 * r.gbit_per_s / (*r.rate_gbit * directions));
                }
            }
            out.push_back(std::move(v));
        }
    }
    return out;
}

std::vector<figure_verdict> rail_floor_verdicts(const run_result& run, double min_gbit) {
    if (!(min_gbit > 0 && std::isfinite(min_gbit)))
        throw spec_error(fmt::format("--min-gbit {} is out of range: give the least Gbit/s each rail must carry, a number > 0",
                                     min_gbit));
    std::vector<figure_verdict> out;
    for (const auto& p : run.points) {
        if (p.test == test_kind::latency) continue;
        for (const auto& r : p.rails) {
            figure_verdict v;
            v.figure = {figure_kind::bandwidth, p.size_bytes, r.gbit_per_s, r.name};
            v.crit_at = min_gbit;
            if (r.failed) {
                v.state = check_state::critical;
                v.reason = "failed: " + r.error;
            } else if (!(r.gbit_per_s > 0)) {
                v.state = check_state::critical;
                v.reason = "moved no bytes in the measured window (link down, or its route leaves by another interface)";
            } else if (r.gbit_per_s < min_gbit) {
                v.state = check_state::critical;
                v.reason = fmt::format("below --min-gbit {:g} (each rail's floor)", min_gbit);
            }
            out.push_back(std::move(v));
        }
    }
    return out;
}

namespace {

/// The peer's rail matched with the initiator's `rail` in the run's spec ("?" when absent).
std::string peer_rail_of(const run_result& run, const std::string& rail) {
    for (const auto& r : run.spec.rails)
        if (r.name == rail) return r.peer_name;
    return "?";
}

/// "h1:7470 rail ra2 -> h2:7470 rail rb2", the peer's rail from the run's spec.
std::string rail_ends(const run_result& run, const std::string& from, const std::string& to, const std::string& rail) {
    return fmt::format("{} rail {} -> {} rail {}", from, rail, to, peer_rail_of(run, rail));
}

}  // namespace

std::vector<rail_problem> rail_sibling_problems(std::span<const run_result> runs, const std::string& from, const std::string& to,
                                                double fraction) {
    if (!(fraction > 0 && fraction <= 1))
        throw spec_error(fmt::format("the rails' sibling fraction {} is out of range: give a fraction in (0, 1]", fraction));
    struct measured {
        const run_result* run;
        const rail_figures* rail;
    };
    // A point is its test and size; its rails may come from several runs (--rails-serial).
    std::map<std::pair<test_kind, std::uint64_t>, std::vector<measured>> points;
    for (const auto& run : runs)
        for (const auto& p : run.points) {
            if (p.test == test_kind::latency) continue;
            for (const auto& r : p.rails)
                if (!r.failed && r.gbit_per_s > 0 && std::isfinite(r.gbit_per_s))
                    points[{p.test, p.size_bytes}].push_back({&run, &r});
        }
    std::vector<rail_problem> out;
    for (const auto& [key, rails] : points) {
        if (rails.size() < 2) continue;
        const bool by_rate = std::all_of(rails.begin(), rails.end(), [](const measured& m) {
            const auto& f = m.rail->rate_fraction;
            return f && *f > 0 && std::isfinite(*f);
        });
        const auto metric = [&](const measured& m) { return by_rate ? *m.rail->rate_fraction : m.rail->gbit_per_s; };
        std::vector<double> values;
        for (const auto& m : rails) values.push_back(metric(m));
        std::sort(values.begin(), values.end());
        const double median = percentile_sorted(values, 0.5);
        for (const auto& m : rails) {
            const double share = metric(m) / median;
            if (!(share < fraction)) continue;
            out.push_back({m.rail->name,
                           fmt::format("{}: {} Gbit/s at {}, {:.0f}% of the median of the link's {} rails ({}), below {}",
                                       rail_ends(*m.run, from, to, m.rail->name), message_figure(m.rail->gbit_per_s),
                                       format_size(key.second), 100 * share, rails.size(),
                                       by_rate ? fmt::format("the median rail carries {:.3g}% of its link rate", 100 * median)
                                               : fmt::format("{} Gbit/s", message_figure(median)),
                                       fraction)});
        }
    }
    return out;
}

std::vector<rail_problem> rail_link_problems(const run_result& run, const std::string& from, const std::string& to,
                                             double min_rate_fraction, bool& unknown_rate) {
    const auto ends = [&](const std::string& rail) { return rail_ends(run, from, to, rail); };
    std::vector<rail_problem> out;
    if (min_rate_fraction > 0) {
        for (const auto& v : rail_verdicts(run, min_rate_fraction)) {
            if (v.state == check_state::unknown) unknown_rate = true;
            if (v.state != check_state::critical) continue;
            out.push_back({v.figure.rail, fmt::format("{}: {} Gbit/s at {}, {}", ends(v.figure.rail), message_figure(v.figure.value),
                                                      format_size(v.figure.size_bytes), v.reason)});
        }
        return out;
    }
    for (const auto& p : run.points) {
        if (p.test == test_kind::latency) continue;
        for (const auto& r : p.rails)
            if (r.failed)
                out.push_back({r.name, fmt::format("{}: failed at {}: {}", ends(r.name), format_size(p.size_bytes), r.error)});
            else if (!(r.gbit_per_s > 0))
                out.push_back({r.name, fmt::format("{}: moved no bytes at {} (link down, or its route leaves by another interface)",
                                                   ends(r.name), format_size(p.size_bytes))});
    }
    return out;
}

std::vector<rail_reading> rail_readings(std::span<const run_result> runs) {
    struct best {
        rail_reading reading;
        bool bandwidth = false;  // from a bandwidth point (else bidir)
        std::uint64_t size = 0;
    };
    std::vector<best> out;
    for (const auto& run : runs)
        for (const auto& p : run.points) {
            if (p.test != test_kind::bandwidth && p.test != test_kind::bidir) continue;
            const bool bandwidth = p.test == test_kind::bandwidth;
            for (const auto& r : p.rails) {
                auto it = std::find_if(out.begin(), out.end(), [&](const best& b) { return b.reading.name == r.name; });
                if (it == out.end()) {
                    out.push_back({});
                    it = std::prev(out.end());
                } else if (std::pair(it->bandwidth, it->size) > std::pair(bandwidth, p.size_bytes)) {
                    continue;  // a bandwidth point beats a bidir one, then the larger size
                }
                const bool moved = !r.failed && r.gbit_per_s > 0 && std::isfinite(r.gbit_per_s);
                const bool share = r.rate_fraction && *r.rate_fraction > 0 && std::isfinite(*r.rate_fraction);
                it->reading = {r.name, peer_rail_of(run, r.name), moved ? r.gbit_per_s : 0, moved && share ? r.rate_fraction : std::nullopt, !moved};
                it->bandwidth = bandwidth;
                it->size = p.size_bytes;
            }
        }
    std::vector<rail_reading> readings;
    for (auto& b : out) readings.push_back(std::move(b.reading));
    return readings;
}

void add_rail_verdicts(check_result& r, std::vector<figure_verdict> rails) {
    if (r.figures.empty()) return;
    for (auto& v : rails) {
        r.state = worst(r.state, v.state);
        r.figures.push_back(std::move(v));
    }
}

}  // namespace meshperf::core
