#include "client/render/matrix_text.hpp"

#include "client/render/table.hpp"

#include <fmt/format.h>
#include <vector>

namespace meshperf::client {

std::string matrix_cell(const std::string& text, const analysis::link_verdict& v, matrix_figure figure) {
    // A rail below its rate is a bandwidth problem the aggregate may hide.
    const bool bad = figure == matrix_figure::bandwidth ? v.bandwidth_bad || v.rails_bad : v.latency_bad;
    return bad ? text + "*" : text;
}

std::string retest_note(const analysis::link_verdict& now, const std::optional<analysis::link_sample>& first,
                        const analysis::matrix_analysis& a) {
    if (!first || !now.bad) return "";
    if (!first->reachable) return " (bad in the retest; the first measurement failed)";
    const auto before = analysis::judge_link(*first, a);
    std::vector<std::string> confirmed, new_in_retest;
    if (now.bandwidth_bad) (before.bandwidth_bad ? confirmed : new_in_retest).push_back("bandwidth");
    if (now.latency_bad) (before.latency_bad ? confirmed : new_in_retest).push_back("latency");
    if (new_in_retest.empty()) return " (confirmed by a retest)";
    std::string out = " (";
    for (const auto& c : confirmed) out += c + " confirmed by a retest; ";
    for (std::size_t i = 0; i < new_in_retest.size(); ++i) out += (i ? "; " : "") + new_in_retest[i] + " bad in the retest only";
    return out + ")";
}

std::string matrix_reference_text(const analysis::matrix_analysis& a) {
    std::string out;
    if (a.bandwidth) out += fmt::format("median bandwidth {:.3f} Gbit/s (MAD {:.3f})\n", a.bandwidth->median, a.bandwidth->mad);
    if (a.latency) out += fmt::format("median latency {:.1f} us one-way (MAD {:.1f})\n", a.latency->median, a.latency->mad);
    if (a.reference_rule != "median" && (a.bandwidth_reference || a.latency_reference)) {
        std::string figures;
        if (a.bandwidth_reference) figures += fmt::format("{:.3f} Gbit/s", *a.bandwidth_reference);
        if (a.latency_reference) figures += fmt::format("{}{:.1f} us", figures.empty() ? "" : ", ", *a.latency_reference);
        out += fmt::format("links judged against the median of their better half ({}): with {} hosts one slow host's links "
                           "are half of all links or more, so the median could be the slow figure; for a firmer verdict "
                           "measure more hosts, or check each link against the port rate (meshperf check --min-gbit)\n",
                           figures, a.host_count);
    }
    return out;
}

namespace {

std::string group_label(const topology& t, std::size_t g) { return fmt::format("{}={}", t.key, t.group_names.at(g)); }

/// "rack=A" or, when the readings cannot tell, "rack=A or rack=B".
std::string uplink_label(const analysis::group_verdict& v, const topology& t, std::size_t g) {
    auto out = group_label(t, g);
    if (g < v.uplinks.size())
        for (std::size_t o : v.uplinks[g].or_groups) out += " or " + group_label(t, o);
    return out;
}

std::string gbit(const std::optional<double>& v) { return v ? fmt::format("{:.3f} Gbit/s", *v) : std::string("-"); }

}  // namespace

std::string cause_note(const analysis::group_verdict& v, std::size_t i, std::span<const std::string> names, const topology* topo) {
    if (i >= v.cause.size()) return "";
    switch (v.cause[i]) {
        case analysis::link_cause::host: return fmt::format(" [host {}]", names[v.cause_host[i]]);
        case analysis::link_cause::uplink:
            return topo ? fmt::format(" [uplink of {}]", uplink_label(v, *topo, v.cause_host[i])) : std::string(" [uplink]");
        case analysis::link_cause::rail_plane: return " [rail plane]";
        case analysis::link_cause::rail_uplink: return " [rail uplink]";
        case analysis::link_cause::none: break;
    }
    return "";
}

std::string bad_links_heading(std::size_t bad, const analysis::group_verdict* v, std::span<const std::size_t> bad_indices) {
    if (bad == 0) return "bad links: none\n";
    if (!v) return fmt::format("bad links: {}\n", bad);
    std::size_t by_host = 0, by_uplink = 0, by_plane = 0, by_rail_uplink = 0;
    for (std::size_t i : bad_indices) {
        const auto cause = i < v->cause.size() ? v->cause[i] : analysis::link_cause::none;
        by_host += cause == analysis::link_cause::host;
        by_uplink += cause == analysis::link_cause::uplink;
        by_plane += cause == analysis::link_cause::rail_plane;
        by_rail_uplink += cause == analysis::link_cause::rail_uplink;
    }
    return fmt::format("bad links: {} ({} explained by suspect hosts, {} by slow uplinks, {}{}{} on their own)\n", bad, by_host,
                       by_uplink, by_plane ? fmt::format("{} by slow rail planes, ", by_plane) : std::string(),
                       by_rail_uplink ? fmt::format("{} by slow rail uplinks, ", by_rail_uplink) : std::string(),
                       bad - by_host - by_uplink - by_plane - by_rail_uplink);
}

std::string uplink_lines(const analysis::group_verdict& v, const topology& topo) {
    std::string out;
    for (const auto& u : v.uplinks) {
        if (!u.bad) continue;
        out += fmt::format("  uplink of {}: {} of {} cross-group links bad (median {}); in-group links {} of {} bad (median {})\n",
                           uplink_label(v, topo, u.group), u.cross_bad, u.cross_links, gbit(u.cross_median_gbit), u.in_group_bad,
                           u.in_group_links, gbit(u.in_group_median_gbit));
        if (!u.or_groups.empty())
            out += fmt::format("    the readings cannot tell which: every cross-group link of {} is with {}; measure them "
                               "against a third group, or read each uplink's switch port counters\n",
                               u.or_groups.size() == 1 ? group_label(topo, u.or_groups[0]) : std::string("the others"),
                               group_label(topo, u.group));
    }
    return (out.empty() ? std::string("slow uplinks: none\n") : "slow uplinks:\n" + out);
}

std::string group_pair_table(const analysis::group_verdict& v, const topology& topo) {
    std::vector<std::vector<std::string>> rows{{"from " + topo.key, "to " + topo.key, "links", "bad", "median Gbit/s"}};
    for (const auto& p : v.pairs)
        rows.push_back({topo.group_names.at(p.from_group), topo.group_names.at(p.to_group), std::to_string(p.links),
                        std::to_string(p.bad), p.median_gbit ? fmt::format("{:.3f}", *p.median_gbit) : "-"});
    return fmt::format("per {} pair (row: sender's {}, receiver's {})\n", topo.key, topo.key, topo.key) + format_table(rows) + "\n";
}

}  // namespace meshperf::client
