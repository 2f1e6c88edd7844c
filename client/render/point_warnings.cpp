#include "client/render/point_warnings.hpp"

#include "core/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <string_view>

namespace meshperf::client {

namespace {

/// A warning cut around its numbers: words.size() == numbers.size() + 1.
struct split_warning {
    std::vector<std::string> words;
    std::vector<std::string> numbers;
};

/// A number starts with a digit not glued to a letter or '_' (as in "p2p", "mlx5_0") and
/// may have one decimal point.
split_warning split_numbers(std::string_view text) {
    split_warning out{{""}, {}};
    for (std::size_t i = 0; i < text.size();) {
        const bool glued = i > 0 && (std::isalpha(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
        if (std::isdigit(static_cast<unsigned char>(text[i])) && !glued) {
            std::size_t j = i;
            while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
            if (j + 1 < text.size() && text[j] == '.' && std::isdigit(static_cast<unsigned char>(text[j + 1]))) {
                ++j;
                while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
            }
            out.numbers.emplace_back(text.substr(i, j - i));
            out.words.emplace_back();
            i = j;
        } else {
            out.words.back() += text[i++];
        }
    }
    return out;
}

/// A group while it is collected: the words, and per number slot the values seen.
struct collecting {
    std::vector<std::string> words;
    std::vector<std::vector<std::string>> numbers;
};

/// The text with each number that varies as "low–high".
std::string merged_text(const collecting& c) {
    std::string text = c.words[0];
    for (std::size_t k = 0; k < c.numbers.size(); ++k) {
        const auto& seen = c.numbers[k];
        const auto [lo, hi] = std::minmax_element(seen.begin(), seen.end(), [](const std::string& a, const std::string& b) {
            return std::stod(a) < std::stod(b);
        });
        text += std::stod(*lo) == std::stod(*hi) ? *lo : *lo + "–" + *hi;
        text += c.words[k + 1];
    }
    return text;
}

std::string where_text(const std::vector<const core::point_result*>& points, const core::run_result& r) {
    if (points.size() == r.points.size())
        return r.points.size() == 1 ? std::string("the only point") : fmt::format("all {} points", r.points.size());
    std::string where;
    for (auto t : {core::test_kind::latency, core::test_kind::bandwidth, core::test_kind::bidir}) {
        std::vector<std::uint64_t> sizes;
        for (const auto* p : points)
            if (p->test == t) sizes.push_back(p->size_bytes);
        if (sizes.empty()) continue;
        const auto of_test = static_cast<std::size_t>(
            std::count_if(r.points.begin(), r.points.end(), [&](const core::point_result& p) { return p.test == t; }));
        std::string part;
        if (sizes.size() == of_test && of_test > 1) {
            part = fmt::format("every {} point", core::to_string(t));
        } else {
            std::sort(sizes.begin(), sizes.end());
            part = fmt::format("{} at ", core::to_string(t));
            for (std::size_t i = 0; i < sizes.size(); ++i) part += (i ? ", " : "") + core::format_size(sizes[i]);
        }
        where += (where.empty() ? "" : "; ") + part;
    }
    return where;
}

}  // namespace

point_warnings group_point_warnings(const core::run_result& run) {
    point_warnings pw;
    std::vector<collecting> collected;
    std::map<std::vector<std::string>, std::size_t> by_words;
    for (const auto& p : run.points)
        for (const auto& w : p.warnings) {
            auto split = split_numbers(w);
            const auto [it, added] = by_words.try_emplace(split.words, collected.size());
            if (added) {
                collected.push_back({split.words, std::vector<std::vector<std::string>>(split.numbers.size())});
                pw.groups.emplace_back();
            }
            const auto k = it->second;
            for (std::size_t n = 0; n < split.numbers.size(); ++n) collected[k].numbers[n].push_back(split.numbers[n]);
            auto& points = pw.groups[k].points;
            if (points.empty() || points.back() != &p) points.push_back(&p);
            auto& refs = pw.of_point[&p];
            if (std::find(refs.begin(), refs.end(), k) == refs.end()) refs.push_back(k);
        }
    for (std::size_t k = 0; k < pw.groups.size(); ++k) {
        pw.groups[k].text = merged_text(collected[k]);
        pw.groups[k].where = where_text(pw.groups[k].points, run);
    }
    return pw;
}

}  // namespace meshperf::client
