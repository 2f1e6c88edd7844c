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

std::size_t rail_cells::bytes() const {
    std::size_t names = 0;
    for (const auto& n : names_) names += sizeof n + n.capacity();
    return cells_.capacity() * sizeof(cell) + names + replaced_.size() * 48;
}

std::vector<std::string> rail_fleet_verdict::slow_planes() const {
    std::vector<std::string> out;
    for (const auto& p : planes)
        if (p.slow) out.push_back(p.rail);
    return out;
}

namespace {

std::optional<double> median(const std::vector<double>& values) {
    const auto s = robust_summary(values);
    return s ? std::optional<double>(s->median) : std::nullopt;
}

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
        throw core::spec_error(fmt::format("the rail planes' fraction {} is out of range: give a fraction in (0, 1]", fraction));
    if (!(suspect_fraction >= 0 && suspect_fraction < 1))
        throw core::spec_error(fmt::format("the rail suspect fraction {} is out of range: give a fraction in [0, 1)", suspect_fraction));
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
        if (const auto m = median(e.values)) plane_values[key.second].push_back(*m);
    }
    std::vector<double> figures;
    for (auto& [rail, p] : planes) {
        p.rail = cells.names()[rail];
        p.endpoints = plane_endpoints[rail];
        p.figure = median(plane_values[rail]);
        if (p.figure && p.endpoints >= 2) figures.push_back(*p.figure);
    }
    if (figures.size() >= 2) v.reference = median(figures);
    for (auto& [rail, p] : planes) {
        if (v.reference && *v.reference > 0 && p.figure && p.endpoints >= 2) {
            p.of_reference = *p.figure / *v.reference;
            p.slow = *p.of_reference < fraction;
        }
    }
    std::set<std::uint8_t> slow;
    for (const auto& [rail, p] : planes)
        if (p.slow) slow.insert(rail);
    // A receiving endpoint's plane is its own rail's name: rails of one name are one plane.
    const auto on_slow_plane = [&](std::uint8_t rail) {
        return std::any_of(slow.begin(), slow.end(), [&](std::uint8_t s) { return cells.names()[s] == cells.names()[rail]; });
    };
    // Rule 3: suspects.
    for (const auto& [key, e] : endpoints) {
        if (on_slow_plane(key.second) || e.values.size() < 2) continue;
        if (!(static_cast<double>(e.bad) > suspect_fraction * static_cast<double>(e.values.size()))) continue;
        v.suspects.push_back({key.first, cells.names()[key.second], e.values.size(), e.bad, median(e.values)});
    }
    // Rule 4: links explained by the slow planes.
    if (!slow.empty()) {
        std::map<std::pair<std::size_t, std::size_t>, bool> all_on_slow;  // per link with a bad rail
        for (const auto& c : cells.cells()) {
            if (!counts(c) || !c.bad) continue;
            const bool on = on_slow_plane(c.rail) || on_slow_plane(c.peer_rail);
            auto [it, fresh] = all_on_slow.insert({{c.from, c.to}, on});
            if (!fresh) it->second = it->second && on;
        }
        for (const auto& [link, on] : all_on_slow)
            if (on) v.explained.insert(link);
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
