#include "client/render/matrix_text.hpp"

#include <fmt/format.h>
#include <vector>

namespace meshperf::client {

std::string matrix_cell(const std::string& text, const analysis::link_verdict& v, matrix_figure figure) {
    const bool bad = figure == matrix_figure::bandwidth ? v.bandwidth_bad : v.latency_bad;
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

}  // namespace meshperf::client
