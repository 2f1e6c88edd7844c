#include "analysis/triage_schedule.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace meshperf::analysis {

namespace {

/// Distinct candidates in [lo, hi], in the given order, at most `count`.
std::vector<std::size_t> pick_shifts(const std::vector<std::size_t>& candidates, std::size_t lo, std::size_t hi,
                                     std::size_t count) {
    std::vector<std::size_t> out;
    auto take = [&](std::size_t t) {
        if (out.size() < count && t >= lo && t <= hi && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    };
    for (std::size_t t : candidates) take(t);
    for (std::size_t t = lo; t <= hi && out.size() < count; ++t) take(t);  // at most count + candidates steps past lo
    return out;
}

/// The shift t over `members` (a ring): links in cycle order, so consecutive links share a host.
void add_ring_links(std::span<const std::size_t> members, std::size_t t, std::vector<directed_link>& out) {
    const std::size_t k = members.size();
    const std::size_t cycles = std::gcd(k, t);
    for (std::size_t c = 0; c < cycles; ++c) {
        std::size_t p = c;
        for (std::size_t step = 0; step < k / cycles; ++step) {
            const std::size_t q = (p + t) % k;
            out.push_back({members[p], members[q]});
            p = q;
        }
    }
}

void check_groups(std::size_t hosts, std::span<const std::size_t> group_of) {
    if (hosts < 2) throw core::spec_error(fmt::format("a triage needs at least 2 hosts, got {}", hosts));
    if (!group_of.empty() && group_of.size() != hosts)
        throw core::spec_error(fmt::format("{} group labels given for {} hosts; give one per host", group_of.size(), hosts));
}

}  // namespace

const char* to_string(triage_round_kind k) {
    switch (k) {
        case triage_round_kind::ring: return "ring";
        case triage_round_kind::in_group: return "in-group";
        case triage_round_kind::cross_group: return "cross-group";
    }
    return "ring";
}

std::vector<std::size_t> ring_shifts(std::size_t k, std::size_t count) {
    if (k < 2) return {};
    return pick_shifts({1, (k - 1) / 2, k / 3}, 1, k / 2, count);
}

std::vector<triage_round> triage_schedule(std::size_t hosts, std::span<const std::size_t> group_of) {
    check_groups(hosts, group_of);
    std::vector<triage_round> rounds;
    std::vector<std::size_t> all(hosts);
    std::iota(all.begin(), all.end(), std::size_t{0});
    const std::set<std::size_t> distinct(group_of.begin(), group_of.end());
    if (distinct.size() < 2) {
        for (std::size_t t : ring_shifts(hosts, triage_ring_rounds)) {
            triage_round r{triage_round_kind::ring, t, {}};
            add_ring_links(all, t, r.links);
            rounds.push_back(std::move(r));
        }
        return rounds;
    }
    // Hosts ordered group by group; members of each group in host order.
    std::vector<std::size_t> order = all;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return group_of[a] < group_of[b]; });
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < hosts; ++i) {
        if (i == 0 || group_of[order[i]] != group_of[order[i - 1]]) groups.emplace_back();
        groups.back().push_back(order[i]);
    }
    std::size_t largest = 0;
    for (const auto& g : groups) largest = std::max(largest, g.size());
    for (std::size_t j = 0; j < triage_in_group_rounds; ++j) {
        triage_round r{triage_round_kind::in_group, 0, {}};
        for (const auto& g : groups) {
            const auto shifts = ring_shifts(g.size(), triage_in_group_rounds);
            if (j >= shifts.size()) continue;
            add_ring_links(g, shifts[j], r.links);
            if (g.size() == largest) r.shift = shifts[j];
        }
        if (!r.links.empty()) rounds.push_back(std::move(r));
    }
    const std::size_t n = hosts;
    const auto shifts = 2 * largest <= n ? pick_shifts({largest, (n - 1) / 2, (largest + n / 2) / 2}, largest, n / 2,
                                                       triage_cross_group_rounds)
                                         : pick_shifts({n / 2}, 1, n / 2, triage_cross_group_rounds);
    for (std::size_t s : shifts) {
        triage_round r{triage_round_kind::cross_group, s, {}};
        std::vector<directed_link> ring;
        add_ring_links(order, s, ring);
        for (const auto& l : ring)
            if (group_of[l.from] != group_of[l.to]) r.links.push_back(l);
        if (!r.links.empty()) rounds.push_back(std::move(r));
    }
    return rounds;
}

std::vector<std::vector<directed_link>> triage_waves(std::size_t hosts, std::span<const directed_link> links) {
    std::vector<std::vector<directed_link>> waves;
    std::vector<std::vector<bool>> busy;
    for (const auto& l : links) {
        if (l.from >= hosts || l.to >= hosts)
            throw core::spec_error(fmt::format("link {} -> {} names a host outside the {} hosts", l.from, l.to, hosts));
        if (l.from == l.to) throw core::spec_error(fmt::format("link {} -> {} joins a host to itself", l.from, l.to));
        std::size_t w = 0;
        while (w < waves.size() && (busy[w][l.from] || busy[w][l.to])) ++w;
        if (w == waves.size()) {
            waves.emplace_back();
            busy.emplace_back(hosts, false);
        }
        waves[w].push_back(l);
        busy[w][l.from] = busy[w][l.to] = true;
    }
    return waves;
}

namespace {

/// Picks localisation partners: healthy, same group first, least used, nearest.
class partner_picker {
public:
    explicit partner_picker(const localisation_input& in) : in_(in), load_(in.hosts, 0) {
        for (const auto& l : in.measured) taken_.emplace(l.from, l.to);
    }

    /// A healthy partner for `host` (as receiver when `host_sends`), not one of `avoid`.
    std::optional<std::size_t> pick(std::size_t host, bool host_sends, std::span<const std::size_t> avoid) {
        std::optional<std::size_t> best;
        auto key = [&](std::size_t c) {
            const bool other_group = !in_.group_of.empty() && in_.group_of[c] != in_.group_of[host];
            const std::size_t distance = std::min((c + in_.hosts - host) % in_.hosts, (host + in_.hosts - c) % in_.hosts);
            return std::tuple{other_group, load_[c], distance, c};
        };
        for (std::size_t c = 0; c < in_.hosts; ++c) {
            if (c == host || !in_.healthy[c] || std::find(avoid.begin(), avoid.end(), c) != avoid.end()) continue;
            if (taken_.contains(host_sends ? std::pair{host, c} : std::pair{c, host})) continue;
            if (!best || key(c) < key(*best)) best = c;
        }
        if (best) {
            ++load_[*best];
            taken_.insert(host_sends ? std::pair{host, *best} : std::pair{*best, host});
        }
        return best;
    }

private:
    const localisation_input& in_;
    std::vector<std::size_t> load_;
    std::set<std::pair<std::size_t, std::size_t>> taken_;
};

}  // namespace

std::vector<directed_link> localisation_links(const localisation_input& in) {
    if (in.healthy.size() != in.hosts || (!in.group_of.empty() && in.group_of.size() != in.hosts))
        throw core::spec_error(fmt::format("localisation of {} hosts needs one healthy flag (and group, when given) per host",
                                           in.hosts));
    std::vector<directed_link> out;
    std::set<std::pair<std::size_t, std::size_t>> seen;
    auto add = [&](std::size_t from, std::size_t to) {
        if (seen.emplace(from, to).second) out.push_back({from, to});
    };
    partner_picker partners(in);
    for (const auto& l : in.bad_links) {
        if (l.from >= in.hosts || l.to >= in.hosts || l.from == l.to)
            throw core::spec_error(fmt::format("bad link {} -> {} is not a link between two of {} hosts", l.from, l.to, in.hosts));
        add(l.from, l.to);
        const std::size_t ends[] = {l.from, l.to};
        if (const auto c = partners.pick(l.from, true, ends)) add(l.from, *c);
        if (const auto d = partners.pick(l.to, false, ends)) add(*d, l.to);
    }
    for (std::size_t h : in.suspect_hosts) {
        if (h >= in.hosts) throw core::spec_error(fmt::format("suspect host {} is not one of {} hosts", h, in.hosts));
        if (const auto c = partners.pick(h, true, {})) add(h, *c);
        if (const auto d = partners.pick(h, false, {})) add(*d, h);
    }
    return out;
}

}  // namespace meshperf::analysis
