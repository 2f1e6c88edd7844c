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

rail_explanation rail_fleet_verdict::explanation(std::size_t from, std::size_t to) const {
    const explained_link key{static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to)};
    const auto it = std::lower_bound(explained.begin(), explained.end(), key);
    return it != explained.end() && it->from == key.from && it->to == key.to ? it->by : rail_explanation::none;
}

std::vector<std::string> rail_fleet_verdict::slow_planes() const {
    std::vector<std::string> out;
    for (const auto& p : planes)
        if (p.slow) out.push_back(p.rail);
    return out;
}

namespace {

using cell = rail_cells::cell;

/// Rule 1's endpoint: its readings' values (those not set aside) and counts.
struct endpoint {
    std::vector<double> values;
    std::size_t links = 0;  ///< readings, set aside ones included (as not bad)
    std::size_t bad = 0;
};

/// names[i], or i when there is no such name.
std::string name_or_index(std::span<const std::string> names, std::size_t i) {
    return i < names.size() ? names[i] : std::to_string(i);
}

/// A (plane, group) pair: a group's uplink on one rail plane.
using plane_group = std::pair<std::uint8_t, std::size_t>;

/// What rule 0 weighs for one plane and group.
struct uplink_counts {
    std::size_t cross = 0, cross_bad = 0, in_group = 0, in_group_bad = 0;
};

/// Rule 0: the rail uplinks, and which readings they set aside.
class rail_uplinks {
public:
    rail_uplinks(std::span<const std::size_t> group_of, std::size_t group_count) : group_of_(group_of), groups_(group_count) {}

    /// Names the uplinks over the counted cells (`counts`), recording them in `out`.
    template <class Counts>
    void name(const rail_cells& cells, Counts counts, double suspect_fraction, std::vector<rail_uplink_verdict>& out) {
        if (group_of_.empty() || groups_ < 2) return;  // no groups: no rule 0
        std::vector<std::size_t> members(groups_, 0);
        for (std::size_t g : group_of_) ++members[g];
        const auto nic_fault = nic_faults(cells, counts, suspect_fraction);
        const auto first = weigh(cells, counts, nic_fault);
        for (;;) {
            const auto w = weigh(cells, counts, nic_fault);
            std::optional<plane_group> best;
            double best_share = suspect_fraction;
            for (const auto& [key, n] : w) {
                if (named_.count(key) || members[key.second] < 2 || n.in_group == 0 || share_above(n.in_group_bad, n.in_group, suspect_fraction))
                    continue;
                if (!share_above(n.cross_bad, n.cross, best_share)) continue;
                best = key;
                best_share = static_cast<double>(n.cross_bad) / static_cast<double>(n.cross);
            }
            if (!best) break;
            named_.insert(*best);
            const auto& n = w.at(*best);
            out.push_back({cells.names()[best->first], best->second, n.cross, n.cross_bad, n.in_group, n.in_group_bad});
        }
        withdraw_spines(cells, counts, nic_fault, first, out);
    }

    /// Whether a reading crosses groups at a named uplink (set aside).
    bool aside(const cell& c) const {
        return !named_.empty() && crosses(c) &&
               (named_.count({c.rail, group_of_[c.from]}) > 0 || named_.count({c.peer_rail, group_of_[c.to]}) > 0);
    }

private:
    bool crosses(const cell& c) const { return group_of_[c.from] != group_of_[c.to]; }

    /// Rail endpoints (host, rail) bad in more than suspect_fraction of their in-group readings.
    template <class Counts>
    std::set<std::pair<std::size_t, std::uint8_t>> nic_faults(const rail_cells& cells, Counts counts, double suspect_fraction) const {
        std::map<std::pair<std::size_t, std::uint8_t>, std::pair<std::size_t, std::size_t>> in_group;  // links, bad
        for (const auto& c : cells.cells()) {
            if (!counts(c) || crosses(c)) continue;
            for (const auto& key : {std::pair<std::size_t, std::uint8_t>{c.from, c.rail}, {c.to, c.peer_rail}}) {
                ++in_group[key].first;
                in_group[key].second += c.bad;
            }
        }
        std::set<std::pair<std::size_t, std::uint8_t>> out;
        for (const auto& [key, n] : in_group)
            if (share_above(n.second, n.first, suspect_fraction)) out.insert(key);
        return out;
    }

    /// The counts per (plane, group) of the readings not set aside and touching no NIC fault.
    template <class Counts>
    std::map<plane_group, uplink_counts> weigh(const rail_cells& cells, Counts counts,
                                               const std::set<std::pair<std::size_t, std::uint8_t>>& nic_fault) const {
        std::map<plane_group, uplink_counts> w;
        for (const auto& c : cells.cells()) {
            if (!counts(c) || nic_fault.count({c.from, c.rail}) || nic_fault.count({c.to, c.peer_rail})) continue;
            const std::size_t gf = group_of_[c.from], gt = group_of_[c.to];
            if (!crosses(c)) {
                for (std::uint8_t plane : {c.rail, c.peer_rail}) {
                    auto& n = w[{plane, gf}];
                    ++n.in_group;
                    n.in_group_bad += c.bad;
                    if (c.peer_rail == c.rail) break;
                }
            } else if (!aside(c)) {
                for (const auto& key : {plane_group{c.rail, gf}, plane_group{c.peer_rail, gt}}) {
                    auto& n = w[key];
                    ++n.cross;
                    n.cross_bad += c.bad;
                }
            }
        }
        return w;
    }

    /// Withdraws the uplinks of a plane where every group that had cross-group readings is
    /// named or has none left: the plane is slow between all its leaves (rule 2's to judge).
    template <class Counts>
    void withdraw_spines(const rail_cells& cells, Counts counts, const std::set<std::pair<std::size_t, std::uint8_t>>& nic_fault,
                         const std::map<plane_group, uplink_counts>& first, std::vector<rail_uplink_verdict>& out) {
        if (named_.empty()) return;
        const auto last = weigh(cells, counts, nic_fault);
        std::set<std::uint8_t> spines;
        for (const auto& key : named_) spines.insert(key.first);
        for (const auto& [key, n] : first) {
            if (n.cross == 0 || named_.count(key)) continue;
            const auto it = last.find(key);
            if (it != last.end() && it->second.cross > 0) spines.erase(key.first);
        }
        if (spines.empty()) return;
        std::erase_if(named_, [&](const plane_group& key) { return spines.count(key.first) > 0; });
        std::erase_if(out, [&](const rail_uplink_verdict& u) {
            return std::any_of(spines.begin(), spines.end(), [&](std::uint8_t plane) { return cells.names()[plane] == u.rail; });
        });
    }

    std::span<const std::size_t> group_of_;
    std::size_t groups_;
    std::set<plane_group> named_;
};

}  // namespace

rail_fleet_verdict judge_rail_planes(const rail_cells& cells, std::size_t host_count, double fraction, double suspect_fraction,
                                     std::span<const std::size_t> group_of, std::size_t group_count) {
    if (!(fraction > 0 && fraction <= 1))
        throw core::spec_error(fmt::format("--bad-bw-fraction {} is out of range for the rail planes: give a fraction in (0, 1]",
                                           fraction));
    if (!(suspect_fraction >= 0 && suspect_fraction < 1))
        throw core::spec_error(fmt::format("--suspect-fraction {} is out of range for the rails: give a fraction in [0, 1)",
                                           suspect_fraction));
    if (!group_of.empty() && group_of.size() != host_count)
        throw core::spec_error(fmt::format("the rail planes were given groups for {} hosts, not the matrix's {}: give one "
                                           "group per host (--topology)",
                                           group_of.size(), host_count));
    for (std::size_t g : group_of)
        if (g >= group_count)
            throw core::spec_error(fmt::format("the rail planes were given group {} of {} groups: give group indices below "
                                               "the group count (--topology)",
                                               g, group_count));
    rail_fleet_verdict v;
    const auto counts = [&](const cell& c) {
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
    const auto value = [&](const cell& c) -> double { return v.by_rate ? c.rate_fraction : c.gbit_per_s; };

    // Rule 0: rail uplinks, when the hosts' groups are known.
    rail_uplinks uplinks(group_of, group_count);
    uplinks.name(cells, counts, suspect_fraction, v.uplinks);

    // Rule 1: endpoints, (host, rail name), as sender and as receiver.
    std::map<std::pair<std::size_t, std::uint8_t>, endpoint> endpoints;
    std::map<std::uint8_t, rail_plane_verdict> planes;
    for (const auto& c : cells.cells()) {
        if (!counts(c)) continue;
        const bool aside = uplinks.aside(c), bad = c.bad && !aside;
        for (const auto& [host, rail] : {std::pair<std::size_t, std::uint8_t>{c.from, c.rail}, {c.to, c.peer_rail}}) {
            auto& e = endpoints[{host, rail}];
            if (!aside) e.values.push_back(value(c));
            ++e.links;
            e.bad += bad;
        }
        auto& p = planes[c.rail];
        ++p.links;
        p.bad += bad;
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
        if (on_slow_plane(key.second) || e.links < 2 || !share_above(e.bad, e.links, suspect_fraction)) continue;
        v.suspects.push_back({key.first, cells.names()[key.second], e.links, e.bad, median_of(e.values)});
    }
    // Rule 4: links explained by the slow planes and rail uplinks. The cells of one counted
    // link are contiguous (one put each; a retest's replace the earlier ones), so a link is a
    // run of cells.
    if (!slow.empty() || !v.uplinks.empty()) {
        const auto& all = cells.cells();
        for (std::size_t i = 0; i < all.size();) {
            std::size_t end = i + 1;
            while (end < all.size() && all[end].from == all[i].from && all[end].to == all[i].to && all[end].retest == all[i].retest)
                ++end;
            bool any_bad = false, all_explained = true, all_uplink = true;
            for (std::size_t k = i; k < end && counts(all[i]); ++k) {
                if (!all[k].bad) continue;
                any_bad = true;
                const bool up = uplinks.aside(all[k]);
                all_explained = all_explained && (up || on_slow_plane(all[k].rail) || on_slow_plane(all[k].peer_rail));
                all_uplink = all_uplink && up;
            }
            if (any_bad && all_explained)
                v.explained.push_back({all[i].from, all[i].to, all_uplink ? rail_explanation::uplink : rail_explanation::plane});
            i = end;
        }
        std::sort(v.explained.begin(), v.explained.end());
    }
    for (auto& [rail, p] : planes) v.planes.push_back(std::move(p));
    std::sort(v.planes.begin(), v.planes.end(), [](const auto& a, const auto& b) { return a.rail < b.rail; });
    return v;
}

json to_json(const rail_fleet_verdict& v, std::span<const std::string> host_names, std::span<const std::string> group_names) {
    const auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
    json planes = json::array(), suspects = json::array(), uplinks = json::array();
    for (const auto& p : v.planes)
        planes.push_back({{"rail", p.rail}, {"endpoints", p.endpoints}, {"links", p.links}, {"bad", p.bad},
                          {"figure", opt(p.figure)}, {"of_reference", opt(p.of_reference)}, {"slow", p.slow}});
    for (const auto& s : v.suspects)
        suspects.push_back({{"host", name_or_index(host_names, s.host)}, {"rail", s.rail}, {"links", s.links}, {"bad", s.bad},
                            {"figure", opt(s.figure)}});
    for (const auto& u : v.uplinks)
        uplinks.push_back({{"rail", u.rail}, {"group", name_or_index(group_names, u.group)}, {"cross_links", u.cross_links},
                           {"cross_bad", u.cross_bad}, {"in_group_links", u.in_group_links}, {"in_group_bad", u.in_group_bad}});
    return {{"compared_by", v.by_rate ? "rate share" : "gbit_per_s"}, {"reference", opt(v.reference)}, {"planes", planes},
            {"suspects", suspects}, {"uplinks", uplinks}, {"explained_links", v.explained.size()}};
}

std::vector<std::string> describe(const rail_fleet_verdict& v, std::span<const std::string> host_names,
                                  std::span<const std::string> group_names) {
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
    for (const auto& u : v.uplinks)
        out.push_back(fmt::format("rail {}'s uplink of {} is slow: bad in {} of its {} cross-group readings on {}, in-group "
                                  "{} of {} (the leaf's ports towards that plane's spine, not its hosts' NICs)",
                                  u.rail, name_or_index(group_names, u.group), u.cross_bad, u.cross_links, u.rail, u.in_group_bad,
                                  u.in_group_links));
    for (const auto& s : v.suspects)
        out.push_back(fmt::format("rail {} of {} is suspect: bad in {} of its {} links{} (its NIC, cable or switch port)", s.rail,
                                  name_or_index(host_names, s.host), s.bad, s.links,
                                  s.figure ? fmt::format(", median {}", figure(*s.figure)) : std::string()));
    return out;
}

}  // namespace meshperf::analysis
