#include "analysis/rail_planes.hpp"

#include "analysis/outliers.hpp"
#include "core/error.hpp"
#include "core/figure_text.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace meshperf::analysis {

using nlohmann::json;

std::uint8_t rail_cells::name_index(const std::string& name) {
    const auto it = std::find(names_.begin(), names_.end(), name);
    if (it != names_.end()) return static_cast<std::uint8_t>(it - names_.begin());
    // A node has at most core::max_rails rails per side; names beyond 255 in one matrix are
    // hosts naming their NICs every which way: they share the last slot, named as such.
    if (names_.size() == 255) return 254;
    names_.push_back(names_.size() == 254 ? std::string("(other rails)") : name);
    return static_cast<std::uint8_t>(names_.size() - 1);
}

void rail_cells::put(std::size_t from, std::size_t to, std::span<const rail_observation> rails, bool retest) {
    const auto f = static_cast<std::uint32_t>(from), t = static_cast<std::uint32_t>(to);
    if (retest) replaced_.insert({f, t});
    for (const auto& r : rails) {
        cell c;
        c.from = f;
        c.to = t;
        c.rail = name_index(r.rail);
        c.peer_rail = name_index(r.peer_rail);
        c.bad = r.bad;
        c.retest = retest;
        const bool moved = r.gbit_per_s > 0 && std::isfinite(r.gbit_per_s);
        c.gbit_per_s = moved ? static_cast<float>(r.gbit_per_s) : 0.0f;
        const bool share = moved && r.rate_fraction && *r.rate_fraction > 0 && std::isfinite(*r.rate_fraction);
        c.rate_fraction = share ? static_cast<float>(*r.rate_fraction) : 0.0f;
        cells_.push_back(c);
    }
}

bool rail_fleet_verdict::explains(std::size_t from, std::size_t to) const {
    return std::binary_search(explained.begin(), explained.end(),
                              std::pair{static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to)});
}

std::vector<std::string> rail_fleet_verdict::slow_planes() const {
    std::vector<std::string> out;
    for (const auto& p : planes)
        if (p.slow) out.push_back(p.rail);
    return out;
}

namespace {

struct endpoint {
    std::vector<double> values;
    std::size_t bad = 0;
};

std::string host_name(std::span<const std::string> names, std::size_t h) {
    return h < names.size() ? names[h] : std::to_string(h);
}

}  // namespace

rail_fleet_verdict judge_rail_planes(const rail_cells& cells, std::size_t host_count, double fraction, double suspect_fraction) {
    if (!(fraction > 0 && fraction <= 1))
        throw core::spec_error(fmt::format("--bad-bw-fraction {} is out of range for the rail planes: give a fraction in (0, 1]",
                                           fraction));
    if (!(suspect_fraction >= 0 && suspect_fraction < 1))
        throw core::spec_error(fmt::format("--suspect-fraction {} is out of range for the rails: give a fraction in [0, 1)",
                                           suspect_fraction));
    rail_fleet_verdict v;
    const auto counts = [&](const rail_cells::cell& c) {
        return c.from < host_count && c.to < host_count && (c.retest || !cells.replaced(c.from, c.to));
    };
    v.by_rate = true;
    bool any = false;
    for (const auto& c : cells.cells())
        if (counts(c) && c.gbit_per_s > 0) {
            any = true;
            v.by_rate = v.by_rate && c.rate_fraction > 0;
        }
    v.by_rate = v.by_rate && any;
    const auto value = [&](const rail_cells::cell& c) -> double { return v.by_rate ? c.rate_fraction : c.gbit_per_s; };

    // Rule 1: endpoints, (host, rail name), as sender and as receiver.
    std::map<std::pair<std::size_t, std::uint8_t>, endpoint> endpoints;
    std::map<std::uint8_t, rail_plane_verdict> planes;
    for (const auto& c : cells.cells()) {
        if (!counts(c)) continue;
        for (const auto& [host, rail] : {std::pair<std::size_t, std::uint8_t>{c.from, c.rail}, {c.to, c.peer_rail}}) {
            auto& e = endpoints[{host, rail}];
            e.values.push_back(value(c));
            e.bad += c.bad;
        }
        auto& p = planes[c.rail];
        ++p.links;
        p.bad += c.bad;
    }
    // Rule 2: planes.
    std::map<std::uint8_t, std::vector<double>> plane_values;
    std::map<std::uint8_t, std::size_t> plane_endpoints;
    for (const auto& [key, e] : endpoints) {
        ++plane_endpoints[key.second];
        if (const auto m = median_of(e.values)) plane_values[key.second].push_back(*m);
    }
    std::vector<double> figures;
    for (auto& [rail, p] : planes) {
        p.rail = cells.names()[rail];
        p.endpoints = plane_endpoints[rail];
        p.figure = median_of(plane_values[rail]);
        if (p.figure && p.endpoints >= 2) figures.push_back(*p.figure);
    }
    if (figures.size() >= 2) v.reference = median_of(figures);
    for (auto& [rail, p] : planes) {
        if (v.reference && *v.reference > 0 && p.figure && p.endpoints >= 2) {
            p.of_reference = *p.figure / *v.reference;
            p.slow = *p.of_reference < fraction;
        }
    }
    // A rail's index is its name's (rail_cells keeps one per name), so a receiving endpoint's
    // plane is found by its own rail's index.
    std::set<std::uint8_t> slow;
    for (const auto& [rail, p] : planes)
        if (p.slow) slow.insert(rail);
    const auto on_slow_plane = [&](std::uint8_t rail) { return slow.count(rail) > 0; };
    // Rule 3: suspects.
    for (const auto& [key, e] : endpoints) {
        if (on_slow_plane(key.second) || e.values.size() < 2) continue;
        if (!(static_cast<double>(e.bad) > suspect_fraction * static_cast<double>(e.values.size()))) continue;
        v.suspects.push_back({key.first, cells.names()[key.second], e.values.size(), e.bad, median_of(e.values)});
    }
    // Rule 4: links explained by the slow planes. The cells of one counted link are
    // contiguous (one put each; a retest's replace the earlier ones), so a link is a run of cells.
    if (!slow.empty()) {
        const auto& all = cells.cells();
        for (std::size_t i = 0; i < all.size();) {
            std::size_t end = i + 1;
            while (end < all.size() && all[end].from == all[i].from && all[end].to == all[i].to && all[end].retest == all[i].retest)
                ++end;
            bool any_bad = false, all_on_slow = true;
            for (std::size_t k = i; k < end && counts(all[i]); ++k) {
                if (!all[k].bad) continue;
                any_bad = true;
                all_on_slow = all_on_slow && (on_slow_plane(all[k].rail) || on_slow_plane(all[k].peer_rail));
            }
            if (any_bad && all_on_slow) v.explained.emplace_back(all[i].from, all[i].to);
            i = end;
        }
        std::sort(v.explained.begin(), v.explained.end());
    }
    for (auto& [rail, p] : planes) v.planes.push_back(std::move(p));
    std::sort(v.planes.begin(), v.planes.end(), [](const auto& a, const auto& b) { return a.rail < b.rail; });
    return v;
}

json to_json(const rail_fleet_verdict& v, std::span<const std::string> host_names) {
    const auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
    json planes = json::array(), suspects = json::array();
    for (const auto& p : v.planes)
        planes.push_back({{"rail", p.rail}, {"endpoints", p.endpoints}, {"links", p.links}, {"bad", p.bad},
                          {"figure", opt(p.figure)}, {"of_reference", opt(p.of_reference)}, {"slow", p.slow}});
    for (const auto& s : v.suspects)
        suspects.push_back({{"host", host_name(host_names, s.host)}, {"rail", s.rail}, {"links", s.links}, {"bad", s.bad},
                            {"figure", opt(s.figure)}});
    return {{"compared_by", v.by_rate ? "rate share" : "gbit_per_s"}, {"reference", opt(v.reference)}, {"planes", planes},
            {"suspects", suspects}, {"explained_links", v.explained.size()}};
}

std::vector<std::string> describe(const rail_fleet_verdict& v, std::span<const std::string> host_names) {
    const auto figure = [&](double x) {
        return v.by_rate ? fmt::format("{:.3g}% of its link rate", 100 * x) : fmt::format("{} Gbit/s", core::message_figure(x));
    };
    std::vector<std::string> out;
    for (const auto& p : v.planes)
        if (p.slow)
            out.push_back(fmt::format("rail plane {} is slow on every host: its hosts' median {}, {:.0f}% of the planes' "
                                      "median (its switch plane, uplinks or settings, not one host; {} of its {} links "
                                      "named bad for it)",
                                      p.rail, figure(*p.figure), 100 * *p.of_reference, p.bad, p.links));
    for (const auto& s : v.suspects)
        out.push_back(fmt::format("rail {} of {} is suspect: bad in {} of its {} links{} (its NIC, cable or switch port)", s.rail,
                                  host_name(host_names, s.host), s.bad, s.links,
                                  s.figure ? fmt::format(", median {}", figure(*s.figure)) : std::string()));
    return out;
}

}  // namespace meshperf::analysis
