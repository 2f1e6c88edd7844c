#include "analysis/outliers.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace meshperf::analysis {

using nlohmann::json;

namespace {

void require_figure(const char* what, const std::optional<double>& v, const link_sample& l) {
    if (v && (!std::isfinite(*v) || *v <= 0))
        throw core::spec_error(fmt::format("link {} -> {}: {} is {}; a measured figure must be a positive number",
                                     l.from, l.to, what, *v));
}

bool has_figure(const link_sample& l) { return l.gbit_per_s.has_value() || l.lat_us.has_value(); }

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json host_name(std::size_t i, std::span<const std::string> names) {
    return names.empty() ? json(i) : json(names[i]);
}

void check_names(std::size_t host_count, std::span<const std::string> names) {
    if (!names.empty() && names.size() != host_count)
        throw core::spec_error(fmt::format("{} host names given for a matrix of {} hosts", names.size(), host_count));
}

// Greedy explanation of unreachable links by hosts; see the header.
std::vector<bool> unreachable_hosts(std::size_t n, const link_source& links,
                                    std::span<const std::size_t> down_hosts, const std::vector<host_tally>& tally) {
    std::vector<std::set<std::size_t>> failed_with(n);
    std::vector<std::size_t> attempted(n, 0);
    for (std::size_t i = 0; i < links.count; ++i) {
        const link_sample l = links.at(i);
        ++attempted[l.from];
        ++attempted[l.to];
        if (l.reachable) continue;
        failed_with[l.from].insert(l.to);
        failed_with[l.to].insert(l.from);
    }
    std::vector<bool> named(n, false);
    auto name = [&](std::size_t h) {
        named[h] = true;
        for (std::size_t p : failed_with[h]) failed_with[p].erase(h);
        failed_with[h].clear();
    };
    for (std::size_t h : down_hosts) name(h);
    for (;;) {
        std::size_t best = n;
        auto share = [&](std::size_t h) {
            return static_cast<double>(tally[h].unreachable) / static_cast<double>(std::max<std::size_t>(attempted[h], 1));
        };
        for (std::size_t h = 0; h < n; ++h) {
            if (named[h] || failed_with[h].size() < 2) continue;
            if (best == n || failed_with[h].size() > failed_with[best].size() ||
                (failed_with[h].size() == failed_with[best].size() && share(h) > share(best)))
                best = h;
        }
        if (best == n) break;
        name(best);
    }
    return named;
}

}  // namespace

void validate(const outlier_options& o) {
    if (!std::isfinite(o.bandwidth_fraction) || o.bandwidth_fraction <= 0 || o.bandwidth_fraction > 1)
        throw core::spec_error(fmt::format("bandwidth fraction {} must be in (0, 1]: a link is bad below this "
                                     "fraction of the median bandwidth (default 0.9)",
                                     o.bandwidth_fraction));
    if (!std::isfinite(o.latency_multiple) || o.latency_multiple < 1)
        throw core::spec_error(fmt::format("latency multiple {} must be at least 1: a link is bad above this "
                                     "multiple of the median latency (default 2)",
                                     o.latency_multiple));
    if (!std::isfinite(o.suspect_fraction) || o.suspect_fraction < 0 || o.suspect_fraction >= 1)
        throw core::spec_error(fmt::format("suspect fraction {} must be in [0, 1): a host is suspect when more than "
                                     "this share of its links is bad (default 0.5)",
                                     o.suspect_fraction));
}

std::optional<double> median_of(std::span<const double> values) {
    const auto s = robust_summary(values);
    return s ? std::optional<double>(s->median) : std::nullopt;
}

std::optional<robust_stats> robust_summary(std::span<const double> values) {
    if (values.empty()) return std::nullopt;
    std::vector<double> v(values.begin(), values.end());
    std::sort(v.begin(), v.end());
    robust_stats s;
    s.count = v.size();
    s.median = core::percentile_sorted(v, 0.5);
    for (double& x : v) x = std::fabs(x - s.median);
    std::sort(v.begin(), v.end());
    s.mad = core::percentile_sorted(v, 0.5);
    return s;
}

namespace {

/// Refuses hosts outside the matrix, self-links, insane figures and links given twice.
void check_matrix_input(std::size_t host_count, const link_source& links, std::span<const std::size_t> down_hosts) {
    for (std::size_t h : down_hosts)
        if (h >= host_count)
            throw core::spec_error(fmt::format("down host {} does not exist in a matrix of {} hosts", h, host_count));
    std::vector<std::uint64_t> keys;
    keys.reserve(links.count);
    for (std::size_t i = 0; i < links.count; ++i) {
        const link_sample l = links.at(i);
        if (l.from >= host_count || l.to >= host_count)
            throw core::spec_error(fmt::format("link {} -> {} names a host outside the matrix of {} hosts", l.from,
                                         l.to, host_count));
        if (l.from == l.to) throw core::spec_error(fmt::format("link {} -> {} joins a host to itself", l.from, l.to));
        require_figure("bandwidth", l.gbit_per_s, l);
        require_figure("latency", l.lat_us, l);
        keys.push_back(static_cast<std::uint64_t>(l.from) * host_count + l.to);
    }
    std::sort(keys.begin(), keys.end());
    if (auto dup = std::adjacent_find(keys.begin(), keys.end()); dup != keys.end())
        throw core::spec_error(fmt::format("link {} -> {} is given twice; pass each directed link once (a retest "
                                     "replaces the first measurement)",
                                     *dup / host_count, *dup % host_count));
}

/// The median of the better half of `values`: the larger ones when higher is better.
double better_half_median(std::vector<double> values, bool higher_is_better) {
    std::sort(values.begin(), values.end());
    if (higher_is_better) std::reverse(values.begin(), values.end());
    values.resize((values.size() + 1) / 2);
    std::sort(values.begin(), values.end());
    return core::percentile_sorted(values, 0.5);
}

/// Suspect hosts (most of their measured links bad) and unreachable ones, from the tallies.
void name_hosts(matrix_analysis& a, const link_source& links, std::span<const std::size_t> down_hosts) {
    for (std::size_t h = 0; h < a.host_count; ++h) {
        host_tally& t = a.hosts[h];
        t.suspect = t.measured > 0 &&
                    static_cast<double>(t.bad) > a.options.suspect_fraction * static_cast<double>(t.measured);
        if (t.suspect) a.suspects.push_back(h);
    }
    const std::vector<bool> gone = unreachable_hosts(a.host_count, links, down_hosts, a.hosts);
    for (std::size_t h = 0; h < a.host_count; ++h) {
        a.hosts[h].unreachable_host = gone[h];
        if (gone[h]) a.unreachable.push_back(h);
    }
}

}  // namespace

link_verdict judge_link(const link_sample& l, const matrix_analysis& a) {
    const auto& options = a.options;
    link_verdict v;
    v.link = l;
    std::vector<std::string> why;
    const auto& ref = a.reference_rule;
    if (l.gbit_per_s && a.bandwidth_reference) {
        const double r = *a.bandwidth_reference;
        v.bandwidth_ratio = *l.gbit_per_s / r;
        v.bandwidth_bad = *l.gbit_per_s < options.bandwidth_fraction * r;
        if (v.bandwidth_bad)
            why.push_back(fmt::format("bandwidth {} Gbit/s < {} x {} {} Gbit/s ({:.0f}% of {})", core::message_figure(*l.gbit_per_s),
                                      options.bandwidth_fraction, ref, core::message_figure(r), 100 * *v.bandwidth_ratio, ref));
    }
    if (l.lat_us && a.latency_reference) {
        const double r = *a.latency_reference;
        v.latency_ratio = *l.lat_us / r;
        v.latency_bad = *l.lat_us > options.latency_multiple * r;
        if (v.latency_bad)
            why.push_back(fmt::format("latency {} us > {} x {} {} us ({} x {})", core::message_figure(*l.lat_us), options.latency_multiple, ref,
                                      core::message_figure(r), core::message_figure(*v.latency_ratio), ref));
    }
    v.counters_bad = !l.counter_problems.empty();
    for (const auto& problem : l.counter_problems) why.push_back("counters: " + problem);
    v.rails_bad = !l.rail_problems.empty();
    for (const auto& problem : l.rail_problems) why.push_back("rail: " + problem);
    v.bad = !why.empty();
    for (std::size_t i = 0; i < why.size(); ++i) v.reason += (i ? "; " : "") + why[i];
    return v;
}

matrix_analysis analyze_matrix(std::size_t host_count, std::span<const link_sample> links,
                               const outlier_options& options, std::span<const std::size_t> down_hosts) {
    return analyze_link_source(host_count, link_source{links.size(), [links](std::size_t i) { return links[i]; }}, options,
                               down_hosts);
}

matrix_analysis analyze_link_source(std::size_t host_count, const link_source& links, const outlier_options& options,
                                    std::span<const std::size_t> down_hosts) {
    validate(options);
    check_matrix_input(host_count, links, down_hosts);
    matrix_analysis a;
    a.host_count = host_count;
    a.options = options;
    std::vector<double> bw, lat;
    for (std::size_t i = 0; i < links.count; ++i) {
        const link_sample l = links.at(i);
        if (!l.reachable) continue;
        if (l.gbit_per_s) bw.push_back(*l.gbit_per_s);
        if (l.lat_us) lat.push_back(*l.lat_us);
    }
    a.bandwidth = robust_summary(bw);
    a.latency = robust_summary(lat);
    const bool small = host_count <= small_matrix_hosts;
    a.reference_rule = small ? "better-half median" : "median";
    if (a.bandwidth) a.bandwidth_reference = small ? better_half_median(bw, true) : a.bandwidth->median;
    if (a.latency) a.latency_reference = small ? better_half_median(lat, false) : a.latency->median;

    a.hosts.resize(host_count);
    a.links.reserve(links.count);
    for (std::size_t i = 0; i < links.count; ++i) {
        link_sample l = links.at(i);
        if (!l.reachable) {
            link_verdict v;
            v.link = std::move(l);
            v.bad = true;
            v.reason = v.link.error.empty() ? "unreachable" : "unreachable: " + v.link.error;
            ++a.hosts[v.link.from].unreachable;
            ++a.hosts[v.link.to].unreachable;
            a.links.push_back(std::move(v));
            continue;
        }
        link_verdict v = judge_link(l, a);
        if (has_figure(l)) {
            for (std::size_t h : {l.from, l.to}) {
                ++a.hosts[h].measured;
                if (v.bad) ++a.hosts[h].bad;
            }
        }
        a.links.push_back(std::move(v));
    }
    name_hosts(a, links, down_hosts);
    return a;
}

std::vector<std::size_t> links_to_retest(const matrix_analysis& a) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < a.links.size(); ++i)
        if (a.links[i].bad && a.links[i].link.reachable) out.push_back(i);
    return out;
}

std::vector<host_pair> pairs_to_retest(const matrix_analysis& a) {
    std::vector<host_pair> out;
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (std::size_t i : links_to_retest(a)) {
        const link_sample& l = a.links[i].link;
        const host_pair p = l.from < l.to ? host_pair{l.from, l.to} : host_pair{l.to, l.from};
        if (seen.emplace(p.a, p.b).second) out.push_back(p);
    }
    return out;
}

json to_json(const link_verdict& v, std::span<const std::string> names) {
    const link_sample& l = v.link;
    if (!names.empty() && (l.from >= names.size() || l.to >= names.size()))
        throw core::spec_error(fmt::format("link {} -> {} names a host beyond the {} host names given", l.from, l.to,
                                     names.size()));
    json j;
    j["from"] = host_name(l.from, names);
    j["to"] = host_name(l.to, names);
    j["reachable"] = l.reachable;
    j["gbit_per_s"] = opt(l.gbit_per_s);
    j["lat_us"] = opt(l.lat_us);
    j["bandwidth_ratio"] = opt(v.bandwidth_ratio);
    j["latency_ratio"] = opt(v.latency_ratio);
    j["bad"] = v.bad;
    j["bandwidth_bad"] = v.bandwidth_bad;
    j["latency_bad"] = v.latency_bad;
    j["counters_bad"] = v.counters_bad;
    j["counter_problems"] = l.counter_problems;
    j["rails_bad"] = v.rails_bad;
    j["rail_problems"] = l.rail_problems;
    j["reason"] = v.reason;
    j["error"] = l.error;
    return j;
}

json to_json(const matrix_analysis& a, std::span<const std::string> names) {
    json j = to_json_without_links(a, names);
    j["links"] = json::array();
    for (const link_verdict& v : a.links) j["links"].push_back(to_json(v, names));
    return j;
}

json to_json_without_links(const matrix_analysis& a, std::span<const std::string> names) {
    check_names(a.host_count, names);
    auto stats = [](const std::optional<robust_stats>& s, auto field) { return s ? json(field(*s)) : json(nullptr); };
    json j;
    j["host_count"] = a.host_count;
    j["options"] = {{"bandwidth_fraction", a.options.bandwidth_fraction},
                    {"latency_multiple", a.options.latency_multiple},
                    {"suspect_fraction", a.options.suspect_fraction}};
    auto median = [](const robust_stats& s) { return s.median; };
    auto mad = [](const robust_stats& s) { return s.mad; };
    j["median"] = {{"gbit_per_s", stats(a.bandwidth, median)}, {"lat_us", stats(a.latency, median)}};
    j["mad"] = {{"gbit_per_s", stats(a.bandwidth, mad)}, {"lat_us", stats(a.latency, mad)}};
    j["reference"] = {{"rule", a.reference_rule}, {"gbit_per_s", opt(a.bandwidth_reference)}, {"lat_us", opt(a.latency_reference)}};
    j["hosts"] = json::array();
    for (std::size_t h = 0; h < a.hosts.size(); ++h) {
        const host_tally& t = a.hosts[h];
        j["hosts"].push_back({{"host", host_name(h, names)},
                              {"measured_links", t.measured},
                              {"bad_links", t.bad},
                              {"unreachable_links", t.unreachable},
                              {"suspect", t.suspect},
                              {"unreachable", t.unreachable_host}});
    }
    j["suspects"] = json::array();
    for (std::size_t h : a.suspects) j["suspects"].push_back(host_name(h, names));
    j["unreachable"] = json::array();
    for (std::size_t h : a.unreachable) j["unreachable"].push_back(host_name(h, names));
    return j;
}

}  // namespace meshperf::analysis
