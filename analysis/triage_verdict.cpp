#include "analysis/triage_verdict.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace meshperf::analysis {

using nlohmann::json;

namespace {

bool counted(const link_verdict& v) { return v.link.reachable && (v.link.gbit_per_s || v.link.lat_us); }

/// Whether link i is set aside (the rails explain it).
bool is_aside(const std::vector<link_cause>& aside, std::size_t i) { return i < aside.size() && aside[i] != link_cause::none; }

/// Hosts more than `fraction` of whose links are bad, counting only links `use` accepts. A
/// link set aside (`aside`: the rails explain it) counts as measured and not bad: the
/// rails, not the host, are what is wrong with it, and leaving it out of the count would let a
/// host's one other bad link make it suspect.
template <class Use>
std::vector<std::size_t> hosts_mostly_bad(const matrix_analysis& a, Use use, const std::vector<link_cause>& aside) {
    std::vector<std::size_t> measured(a.host_count, 0), bad(a.host_count, 0), out;
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& v = a.links[i];
        if (!counted(v) || !use(i)) continue;
        for (std::size_t h : {v.link.from, v.link.to}) {
            ++measured[h];
            bad[h] += v.bad && !is_aside(aside, i);
        }
    }
    for (std::size_t h = 0; h < a.host_count; ++h)
        if (share_above(bad[h], measured[h], a.options.suspect_fraction)) out.push_back(h);
    return out;
}

/// Causes: a bad link set aside is the rails' (its cause in `aside`); any other touching a suspect, the host's.
void explain_by_hosts(const matrix_analysis& a, group_verdict& v, const std::vector<link_cause>& aside) {
    std::vector<bool> suspect(a.host_count, false);
    for (std::size_t h : v.suspects) suspect[h] = true;
    v.cause.assign(a.links.size(), link_cause::none);
    v.cause_host.assign(a.links.size(), 0);
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& l = a.links[i];
        if (!l.bad || !l.link.reachable) continue;
        if (is_aside(aside, i)) {
            v.cause[i] = aside[i];
            continue;
        }
        for (std::size_t h : {l.link.from, l.link.to})
            if (suspect[h] && v.cause[i] == link_cause::none) {
                v.cause[i] = link_cause::host;
                v.cause_host[i] = h;
            }
    }
}

}  // namespace

const char* to_string(link_cause c) {
    switch (c) {
        case link_cause::host: return "host";
        case link_cause::uplink: return "uplink";
        case link_cause::rail_plane: return "rail plane";
        case link_cause::rail_uplink: return "rail uplink";
        case link_cause::none: return "";
    }
    return "";
}

group_verdict judge_without_groups(const matrix_analysis& a, const std::vector<link_cause>& aside) {
    group_verdict v;
    v.suspects = aside.empty() ? a.suspects : hosts_mostly_bad(a, [](std::size_t) { return true; }, aside);
    explain_by_hosts(a, v, aside);
    return v;
}

group_verdict judge_groups(const matrix_analysis& a, std::span<const std::size_t> group_of, std::size_t group_count,
                           const std::vector<link_cause>& aside) {
    if (group_of.size() != a.host_count)
        throw core::spec_error(fmt::format("{} group labels for a matrix of {} hosts", group_of.size(), a.host_count));
    for (std::size_t g : group_of)
        if (g >= group_count) throw core::spec_error(fmt::format("group {} is not one of {} groups", g, group_count));
    const double fraction = a.options.suspect_fraction;
    auto crosses = [&](const link_verdict& l) { return group_of[l.link.from] != group_of[l.link.to]; };
    // Rule 1: host-suspect on in-group evidence.
    std::vector<bool> host_suspect(a.host_count, false);
    for (std::size_t h : hosts_mostly_bad(a, [&](std::size_t i) { return !crosses(a.links[i]); }, aside)) host_suspect[h] = true;
    auto clean = [&](const link_verdict& l) { return counted(l) && !host_suspect[l.link.from] && !host_suspect[l.link.to]; };
    // A link set aside counts as measured and not bad here too.
    auto bad_here = [&](const link_verdict& l) {
        return l.bad && !is_aside(aside, static_cast<std::size_t>(&l - a.links.data()));
    };

    group_verdict v;
    std::vector<std::size_t> members(group_count, 0);
    for (std::size_t g : group_of) ++members[g];
    std::vector<bool> named(group_count, false);
    // Rule 2: greedy uplinks. Each pass tallies what no named group explains yet.
    for (std::size_t pass = 0; pass < group_count; ++pass) {
        std::vector<uplink_verdict> t(group_count);
        std::vector<std::vector<double>> cross_bw(group_count), in_bw(group_count);
        for (std::size_t g = 0; g < group_count; ++g) t[g].group = g;
        for (const auto& l : a.links) {
            if (!clean(l)) continue;
            const std::size_t gf = group_of[l.link.from], gt = group_of[l.link.to];
            if (gf == gt) {
                ++t[gf].in_group_links;
                t[gf].in_group_bad += bad_here(l);
                if (l.link.gbit_per_s) in_bw[gf].push_back(*l.link.gbit_per_s);
                continue;
            }
            if (named[gf] || named[gt]) continue;
            for (std::size_t g : {gf, gt}) {
                ++t[g].cross_links;
                t[g].cross_bad += bad_here(l);
                if (l.link.gbit_per_s) cross_bw[g].push_back(*l.link.gbit_per_s);
            }
        }
        std::optional<std::size_t> best;
        auto share = [&](std::size_t g) { return static_cast<double>(t[g].cross_bad) / static_cast<double>(t[g].cross_links); };
        for (std::size_t g = 0; g < group_count; ++g) {
            if (named[g] || members[g] < 2 || !share_above(t[g].cross_bad, t[g].cross_links, fraction)) continue;
            if (share_above(t[g].in_group_bad, t[g].in_group_links, fraction)) continue;
            if (!best || share(g) > share(*best)) best = g;
        }
        if (v.uplinks.empty()) v.uplinks.resize(group_count);
        for (std::size_t g = 0; g < group_count; ++g) {
            if (named[g]) continue;  // keeps the tally it was named on
            t[g].cross_median_gbit = median_of(cross_bw[g]);
            t[g].in_group_median_gbit = median_of(in_bw[g]);
            v.uplinks[g] = t[g];
        }
        if (!best) break;
        named[*best] = true;
        v.uplinks[*best].bad = true;
    }
    // A named group's look-alikes: groups that met no other group across their uplinks.
    for (std::size_t g = 0; g < group_count; ++g) {
        if (!named[g]) continue;
        std::vector<std::size_t> cross_total(group_count, 0), cross_with_g(group_count, 0), in_total(group_count, 0),
            in_bad(group_count, 0);
        for (const auto& l : a.links) {
            if (!clean(l)) continue;
            const std::size_t gf = group_of[l.link.from], gt = group_of[l.link.to];
            if (gf == gt) {
                ++in_total[gf];
                in_bad[gf] += bad_here(l);
                continue;
            }
            for (std::size_t other : {gf, gt}) {
                ++cross_total[other];
                cross_with_g[other] += (gf == g || gt == g);
            }
        }
        for (std::size_t o = 0; o < group_count; ++o)
            if (o != g && !named[o] && members[o] >= 2 && cross_total[o] > 0 && cross_with_g[o] == cross_total[o] &&
                !share_above(in_bad[o], in_total[o], fraction))
                v.uplinks[g].or_groups.push_back(o);
    }
    auto uplink_link = [&](const link_verdict& l) {
        return crosses(l) && (named[group_of[l.link.from]] || named[group_of[l.link.to]]);
    };
    // Rule 3, then rule 4.
    v.suspects = hosts_mostly_bad(a, [&](std::size_t i) { return !uplink_link(a.links[i]); }, aside);
    explain_by_hosts(a, v, aside);
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& l = a.links[i];
        if (!l.bad || !l.link.reachable || v.cause[i] != link_cause::none || !uplink_link(l)) continue;
        v.cause[i] = link_cause::uplink;
        v.cause_host[i] = named[group_of[l.link.from]] ? group_of[l.link.from] : group_of[l.link.to];
    }
    // Per group pair.
    std::map<std::pair<std::size_t, std::size_t>, std::pair<group_pair_summary, std::vector<double>>> pairs;
    for (const auto& l : a.links) {
        if (!counted(l)) continue;
        auto& [s, bw] = pairs[{group_of[l.link.from], group_of[l.link.to]}];
        s.from_group = group_of[l.link.from];
        s.to_group = group_of[l.link.to];
        ++s.links;
        s.bad += l.bad;
        if (l.link.gbit_per_s) bw.push_back(*l.link.gbit_per_s);
    }
    for (auto& [key, p] : pairs) {
        p.first.median_gbit = median_of(p.second);
        v.pairs.push_back(p.first);
    }
    return v;
}

void apply_suspects(const group_verdict& v, matrix_analysis& a) {
    a.suspects = v.suspects;
    for (auto& h : a.hosts) h.suspect = false;
    for (std::size_t h : v.suspects) a.hosts[h].suspect = true;
}

localisation_input localisation_request(const matrix_analysis& a, const group_verdict& v, std::span<const std::size_t> group_of) {
    localisation_input in;
    in.hosts = a.host_count;
    in.suspect_hosts = v.suspects;
    in.group_of.assign(group_of.begin(), group_of.end());
    in.healthy.assign(a.host_count, true);
    for (std::size_t h : a.unreachable) in.healthy[h] = false;
    for (std::size_t h : v.suspects) in.healthy[h] = false;
    std::vector<bool> in_any(a.host_count, false);
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const auto& l = a.links[i];
        in.measured.push_back({l.link.from, l.link.to});
        in_any[l.link.from] = in_any[l.link.to] = true;
        if (!l.link.reachable) {  // the end that is not a named unreachable host is in doubt
            const bool from_gone = std::find(a.unreachable.begin(), a.unreachable.end(), l.link.from) != a.unreachable.end();
            const bool to_gone = std::find(a.unreachable.begin(), a.unreachable.end(), l.link.to) != a.unreachable.end();
            if (!to_gone) in.healthy[l.link.from] = false;
            if (!from_gone) in.healthy[l.link.to] = false;
            continue;
        }
        if (!l.bad || v.cause[i] == link_cause::uplink || v.cause[i] == link_cause::rail_plane ||
            v.cause[i] == link_cause::rail_uplink)
            continue;
        in.healthy[l.link.from] = in.healthy[l.link.to] = false;
        if (v.cause[i] == link_cause::none) in.bad_links.push_back({l.link.from, l.link.to});
    }
    for (std::size_t h = 0; h < a.host_count; ++h) in.healthy[h] = in.healthy[h] && in_any[h];
    return in;
}

json to_json(const group_verdict& v, std::span<const std::string> names) {
    auto name = [&](std::size_t g) { return g < names.size() ? json(names[g]) : json(g); };
    auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
    json j;
    j["uplinks"] = json::array();
    for (const auto& u : v.uplinks) {
        j["uplinks"].push_back({{"group", name(u.group)},
                                {"bad", u.bad},
                                {"cross_links", u.cross_links},
                                {"cross_bad", u.cross_bad},
                                {"in_group_links", u.in_group_links},
                                {"in_group_bad", u.in_group_bad},
                                {"cross_median_gbit_per_s", opt(u.cross_median_gbit)},
                                {"in_group_median_gbit_per_s", opt(u.in_group_median_gbit)}});
        if (!u.or_groups.empty()) {  // the readings cannot tell these uplinks apart
            auto& alike = j["uplinks"].back()["or_groups"] = json::array();
            for (std::size_t o : u.or_groups) alike.push_back(name(o));
        }
    }
    j["group_pairs"] = json::array();
    for (const auto& p : v.pairs)
        j["group_pairs"].push_back({{"from", name(p.from_group)},
                                    {"to", name(p.to_group)},
                                    {"links", p.links},
                                    {"bad", p.bad},
                                    {"median_gbit_per_s", opt(p.median_gbit)}});
    return j;
}

}  // namespace meshperf::analysis
